import org.jameskvs.server.metrics.ServerMetrics;
public class MetricsCost {
    public static void main(String[] a) {
        ServerMetrics m = new ServerMetrics();
        java.util.Random r = new java.util.Random(1);
        long[] vals = new long[4096]; for (int i = 0; i < vals.length; i++) vals[i] = 20_000 + r.nextInt(400_000);
        for (int round = 0; round < 5; round++) {
            int n = 2_000_000;
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) { m.block(vals[i & 4095], 5); m.commit(vals[(i * 7) & 4095]); }
            long t1 = System.nanoTime();
            System.out.printf("round %d: %.0f ns per block (block()+commit())%n", round, (t1 - t0) / (double) n);
        }
        System.out.println(m.scrape().lines().filter(l -> l.startsWith("kvs_block_seconds_count")).findFirst().orElse(""));
    }
}
