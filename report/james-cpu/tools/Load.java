import com.sun.tools.attach.VirtualMachine;
/** java Load <pid> <agent jar> <output file>: loads TcclAgent (Agent-Class: TcclAgent) into a running JVM. */
public class Load { public static void main(String[] a) throws Exception { VirtualMachine vm = VirtualMachine.attach(a[0]); vm.loadAgent(a[1], a[2]); vm.detach(); } }
