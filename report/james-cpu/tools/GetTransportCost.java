import javax.mail.*;
import java.util.*;
/** getTransport of javax.mail 1.6.2: on a new Session, and on one Session reused (as James's pool does). Usage: java -cp "james-kvs-bench/target/bench/lib/*:." GetTransportCost 500 */
public class GetTransportCost {
    public static void main(String[] a) throws Exception {
        Properties p = new Properties();
        p.put("mail.smtp.host", "127.0.0.1");
        int n = Integer.parseInt(a[0]);
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean(); // CPU time: the machine is shared
        for (int round = 0; round < 3; round++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                Session s = Session.getInstance(new Properties(p));
                s.getTransport(new URLName("smtp://127.0.0.1:25"));
            }
            long t1 = cpu.getCurrentThreadCpuTime();
            Session s = Session.getInstance(new Properties(p));
            for (int i = 0; i < n; i++) {
                s.getTransport(new URLName("smtp://127.0.0.1:25"));
            }
            long t2 = cpu.getCurrentThreadCpuTime();
            System.out.printf("fresh session + getTransport: %.3f ms CPU; reused session getTransport: %.4f ms CPU%n",
                (t1 - t0) / 1e6 / n, (t2 - t1) / 1e6 / n);
        }
    }
}
