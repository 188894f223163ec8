import java.lang.instrument.Instrumentation;
import java.nio.file.*;
import java.util.*;

/** Writes, per thread name (digits as N), the thread context class loader of every thread of the JVM it is loaded into. */
public class TcclAgent {
    public static void agentmain(String args, Instrumentation inst) throws Exception {
        StringBuilder out = new StringBuilder();
        Map<String, Integer> counts = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            ClassLoader cl = t.getContextClassLoader();
            String key = t.getName().replaceAll("\\d+", "N") + " -> " + (cl == null ? "null" : cl.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(cl)));
            counts.merge(key, 1, Integer::sum);
        }
        counts.forEach((k, v) -> out.append(v).append(" x ").append(k).append('\n'));
        out.append("system loader: ").append(ClassLoader.getSystemClassLoader().getClass().getName()).append('@')
            .append(Integer.toHexString(System.identityHashCode(ClassLoader.getSystemClassLoader()))).append('\n');
        Files.writeString(Path.of(args), out.toString());
    }
}
