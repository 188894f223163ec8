import com.sun.tools.attach.VirtualMachine;
import javax.management.*;
import javax.management.remote.*;
import java.util.*;
import java.lang.management.*;

/** Attaches to a JVM (pid) and prints the commons-pool2 pools' counters (James's javax.mail Session pools of RemoteDelivery). */
public class PoolStats {
    public static void main(String[] a) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(a[0]);
        String addr = vm.startLocalManagementAgent();
        try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(addr))) {
            MBeanServerConnection s = c.getMBeanServerConnection();
            for (ObjectName n : s.queryNames(new ObjectName("org.apache.commons.pool2:*"), null)) {
                System.out.println(System.currentTimeMillis() + " " + n + " created=" + s.getAttribute(n, "CreatedCount")
                    + " destroyed=" + s.getAttribute(n, "DestroyedCount") + " borrowed=" + s.getAttribute(n, "BorrowedCount")
                    + " idle=" + s.getAttribute(n, "NumIdle") + " active=" + s.getAttribute(n, "NumActive"));
            }
            if (a.length > 1) {
                // thread names + CPU of the JVM
                OperatingSystemMXBean os = ManagementFactory.newPlatformMXBeanProxy(s, ManagementFactory.OPERATING_SYSTEM_MXBEAN_NAME, OperatingSystemMXBean.class);
                System.out.println("cpu " + ((com.sun.management.OperatingSystemMXBean) ManagementFactory.newPlatformMXBeanProxy(s, ManagementFactory.OPERATING_SYSTEM_MXBEAN_NAME, com.sun.management.OperatingSystemMXBean.class)).getProcessCpuTime());
            }
        }
        vm.detach();
    }
}
