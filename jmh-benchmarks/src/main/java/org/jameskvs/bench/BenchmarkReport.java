package org.jameskvs.bench;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One command, one run: the KVS server and Redis side by side. Prints (and writes to
 * {@code report/kvs-vs-redis.md}) the store+delete throughput table by size with the KVS/Redis
 * ratios, then p50/p99 store latency at fixed offered rates.
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
        md.append("| size | KVS | Redis AOF everysec | Redis no persistence | KVS / Redis AOF | KVS / Redis none |\n");
        md.append("|---:|---:|---:|---:|---:|---:|\n");
        bySize.forEach((size, t) -> md.append(String.format("| %s | %s | %s | %s | %s | %s |%n", human(size),
                cell(t.get("kvs")), cell(t.get("redis-aof")), cell(t.get("redis-none")),
                ratio(t.get("kvs"), t.get("redis-aof")), ratio(t.get("kvs"), t.get("redis-none")))));

        md.append("\n## The same against Redis with its own C client (redis-benchmark, 1 connection, pipeline 1,000)\n\n");
        md.append("| size | KVS (JMH, above) | Redis AOF everysec | Redis no persistence | KVS / Redis AOF |\n");
        md.append("|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<Integer, Map<String, double[]>> e : bySize.entrySet()) {
            int size = e.getKey();
            double aof = RedisBenchmarkTool.storeDeleteTxPerSecond(true, size, quick ? 100_000 : 400_000);
            double none = RedisBenchmarkTool.storeDeleteTxPerSecond(false, size, quick ? 100_000 : 400_000);
            double[] kvs = e.getValue().get("kvs");
            md.append(String.format("| %s | %s | %,.0f | %,.0f | %s |%n", human(size), cell(kvs), aof, none,
                    kvs == null || aof <= 0 ? "-" : String.format("%.2f×", kvs[0] / aof)));
        }

        md.append("\n## Store latency at a fixed offered rate (1 KB, open loop, 1 connection)\n\n");
        md.append("| target | offered tx/s | achieved tx/s | p50 µs | p99 µs | max µs |\n|---|---:|---:|---:|---:|---:|\n");
        int seconds = quick ? 3 : 10;
        List<LatencyAtRate.Result> lat = new ArrayList<>();
        for (int rate : quick ? new int[]{10_000} : new int[]{10_000, 50_000}) {
            for (String target : List.of("kvs", "redis-aof", "redis-none")) {
                lat.add(LatencyAtRate.run(target, 1024, rate, seconds));
            }
        }
        for (LatencyAtRate.Result r : lat) {
            md.append(String.format("| %s | %,d | %,.0f | %.0f | %.0f | %.0f |%n", r.target(), r.offeredRate(),
                    r.achievedRate(), r.p50Micros(), r.p99Micros(), r.maxMicros()));
        }
        System.out.println();
        System.out.println(md);
        Path out = Path.of("report", "kvs-vs-redis.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, "# KVS server vs Redis (" + java.time.LocalDate.now() + ", "
                + Runtime.getRuntime().availableProcessors() + " cores" + (quick ? ", --quick" : "") + ")\n\n" + md);
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
