package org.jameskvs.bench;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One command, one run: the KVS server and Redis side by side. Prints (and writes to
 * {@code report/kvs-vs-redis.md}) the store+delete throughput table by size with the KVS/Redis
 * ratios, at two durability levels (page cache: KVS vs Redis AOF everysec; fsync before the ack:
 * KVS fsync.policy=batch vs Redis appendfsync always), then store-ack latency at 10/50/80 % of each
 * target's max ({@link LatencyReport}: KVS one copy, KVS two copies, Redis AOF everysec).
 *
 * <pre>
 * java -jar jmh-benchmarks/target/benchmarks.jar [--quick]
 * </pre>
 * {@code --quick} runs fewer and shorter iterations (a smoke run, not for quoting).
 */
public final class BenchmarkReport {
    private BenchmarkReport() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = List.of(args).contains("--quick");
        ChainedOptionsBuilder opts = new OptionsBuilder().include("^" + java.util.regex.Pattern.quote(StoreDeleteBenchmark.class.getName()) + "\\.")
                .shouldFailOnError(true);
        if (quick) {
            opts.warmupIterations(1).warmupTime(TimeValue.seconds(1)).measurementIterations(2)
                    .measurementTime(TimeValue.seconds(1)).param("size", "400", "1024", "10240");
        }
        String loadBefore = LoadAverage.oneMinute();
        Collection<RunResult> results = new Runner(opts.build()).run();

        Map<Integer, Map<String, double[]>> bySize = new TreeMap<>();
        for (RunResult r : results) {
            String target = r.getParams().getParam("target");
            int size = Integer.parseInt(r.getParams().getParam("size"));
            bySize.computeIfAbsent(size, k -> new TreeMap<>()).put(target,
                    new double[]{r.getPrimaryResult().getScore(), r.getPrimaryResult().getScoreError()});
        }
        StringBuilder md = new StringBuilder();
        md.append("## Store+delete transactions/s, one pipelined connection (JMH, one run)\n\n");
        md.append("Durability of an acknowledged store: KVS and Redis AOF everysec: in the page cache (survives a kill of the "
                + "server, not a power cut; Redis fsyncs about a second later); KVS fsync.policy=batch and Redis appendfsync "
                + "always: on disk before the ack (survives a power cut); Redis no persistence: memory only.\n\n");
        md.append("| size | KVS (page cache) | Redis AOF everysec (page cache) | KVS / Redis AOF | KVS fsync batch (fsync) | "
                + "Redis AOF always (fsync) | KVS fsync / Redis always | Redis no persistence (memory) | KVS / Redis none |\n");
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        bySize.forEach((size, t) -> md.append(String.format("| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", human(size),
                cell(t.get("kvs")), cell(t.get("redis-aof")), ratio(t.get("kvs"), t.get("redis-aof")),
                cell(t.get("kvs-fsync-batch")), cell(t.get("redis-aof-always")),
                ratio(t.get("kvs-fsync-batch"), t.get("redis-aof-always")),
                cell(t.get("redis-none")), ratio(t.get("kvs"), t.get("redis-none")))));

        md.append("\n## The same against Redis with its own C client (redis-benchmark, 1 connection, pipeline 1,000)\n\n");
        md.append("| size | KVS (JMH, above; page cache) | Redis AOF everysec (page cache) | Redis no persistence (memory) | KVS / Redis AOF |\n");
        md.append("|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<Integer, Map<String, double[]>> e : bySize.entrySet()) {
            int size = e.getKey();
            double aof = RedisBenchmarkTool.storeDeleteTxPerSecond(true, size, quick ? 100_000 : 400_000);
            double none = RedisBenchmarkTool.storeDeleteTxPerSecond(false, size, quick ? 100_000 : 400_000);
            double[] kvs = e.getValue().get("kvs");
            md.append(String.format("| %s | %s | %,.0f | %,.0f | %s |%n", human(size), cell(kvs), aof, none,
                    kvs == null || aof <= 0 ? "-" : String.format("%.2f×", kvs[0] / aof)));
        }

        md.append('\n');
        int seconds = quick ? 3 : 10;
        List<LatencyReport.Row> lat = LatencyReport.run(List.of("kvs", "kvs-2copies", "redis-aof"),
                new int[]{10, 50, 80}, seconds, quick ? 1 : 3, quick ? 3 : 10, quick ? 3 : 5, 1024, Map.of());
        md.append(LatencyReport.markdown(lat, 1024, seconds));
        System.out.println();
        System.out.println(md);
        Path out = Path.of("report", "kvs-vs-redis.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, "# KVS server vs Redis (" + java.time.LocalDate.now() + ", "
                + Runtime.getRuntime().availableProcessors() + " cores" + (quick ? ", --quick" : "") + ", load average "
                + loadBefore + " at the start, " + LoadAverage.oneMinute() + " at the end)\n\n" + md);
        System.out.println("written to " + out.toAbsolutePath());
    }

    private static String human(int size) {
        return size >= 1024 ? (size / 1024.0 == Math.floor(size / 1024.0) ? size / 1024 + " KB"
                : String.format("%.1f KB", size / 1024.0)) : String.format("%.1f KB", size / 1024.0);
    }

    private static String cell(double[] scoreAndError) {
        return scoreAndError == null ? "-" : String.format("%,.0f ± %,.0f", scoreAndError[0], scoreAndError[1]);
    }

    private static String ratio(double[] a, double[] b) {
        return a == null || b == null ? "-" : String.format("%.2f×", a[0] / b[0]);
    }
}
