package org.jameskvs.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a KVS server's own meters say about a span of a benchmark: read from its Prometheus endpoint
 * before and after, and subtracted. Separates time spent on the server's I/O thread (applying blocks
 * of requests: {@code kvs_block_seconds}; group commits: {@code kvs_commit_seconds}) and in its GC
 * pauses ({@code jvm_gc_pause_seconds}) from time the requests spent elsewhere (client, network,
 * waiting for a CPU).
 */
final class ServerTimers {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Cumulative counters of one scrape: metric name (with its le="..." bound for buckets) -> value. */
    record Snapshot(Map<String, Double> values) {
    }

    private ServerTimers() {
    }

    static Snapshot scrape(int metricsPort) {
        Map<String, Double> values = new HashMap<>();
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            for (String line : r.body().split("\n")) {
                if (line.startsWith("kvs_block_") || line.startsWith("kvs_commit_seconds")
                        || line.startsWith("jvm_gc_pause_seconds")) {
                    int space = line.lastIndexOf(' ');
                    values.merge(key(line.substring(0, space)), Double.parseDouble(line.substring(space + 1)), Double::sum);
                }
            }
        } catch (IOException | RuntimeException e) {
            values.put("scrape failed", 1.0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new Snapshot(values);
    }

    /** Name plus the bucket bound, without other labels (GC pauses of every kind are summed). */
    private static String key(String series) {
        int brace = series.indexOf('{');
        String name = brace < 0 ? series : series.substring(0, brace);
        int le = series.indexOf("le=\"");
        return le < 0 ? name : name + "@" + series.substring(le + 4, series.indexOf('"', le + 4));
    }

    /**
     * One line: blocks applied, the I/O thread's busy share in blocks and commits, blocks and commits
     * over 1 ms and 10 ms, the longest (as the bucket bound it fell under), GC pauses (count, total).
     */
    static String describe(Snapshot before, Snapshot after, double seconds) {
        if (before.values().containsKey("scrape failed") || after.values().containsKey("scrape failed")) {
            return "server meters unavailable";
        }
        double blocks = delta(before, after, "kvs_block_seconds_count");
        double blockSum = delta(before, after, "kvs_block_seconds_sum");
        double commitSum = delta(before, after, "kvs_commit_seconds_sum");
        return String.format("%,.0f blocks (%.0f req/block); I/O thread busy %.0f %% in blocks + %.0f %% in commits; "
                        + "blocks >1 ms %s, >10 ms %s, longest <= %s; commits >1 ms %s, longest <= %s; GC %,.0f pauses, %.0f ms",
                blocks, blocks == 0 ? 0 : delta(before, after, "kvs_block_requests_sum") / blocks, 100 * blockSum / seconds, 100 * commitSum / seconds,
                over(before, after, "kvs_block_seconds", 0.001), over(before, after, "kvs_block_seconds", 0.010),
                longest(before, after, "kvs_block_seconds"), over(before, after, "kvs_commit_seconds", 0.001),
                longest(before, after, "kvs_commit_seconds"), delta(before, after, "jvm_gc_pause_seconds_count"),
                1000 * delta(before, after, "jvm_gc_pause_seconds_sum"));
    }

    private static double delta(Snapshot before, Snapshot after, String key) {
        return after.values().getOrDefault(key, 0.0) - before.values().getOrDefault(key, 0.0);
    }

    private static TreeMap<Double, Double> buckets(Snapshot before, Snapshot after, String timer) {
        TreeMap<Double, Double> counts = new TreeMap<>(); // bound -> count at or below it, in the span
        String prefix = timer + "_bucket@";
        after.values().forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                String bound = k.substring(prefix.length());
                counts.put(bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound),
                        v - before.values().getOrDefault(k, 0.0));
            }
        });
        return counts;
    }

    /** How many fell above {@code seconds} (counted at the first bucket bound at or above it). */
    private static String over(Snapshot before, Snapshot after, String timer, double seconds) {
        TreeMap<Double, Double> b = buckets(before, after, timer);
        Map.Entry<Double, Double> atOrBelow = b.ceilingEntry(seconds);
        Map.Entry<Double, Double> all = b.lastEntry();
        return atOrBelow == null || all == null ? "?" : String.format("%,.0f", all.getValue() - atOrBelow.getValue());
    }

    /** The smallest bucket bound that all of the span's observations fell under. */
    private static String longest(Snapshot before, Snapshot after, String timer) {
        TreeMap<Double, Double> b = buckets(before, after, timer);
        Map.Entry<Double, Double> all = b.lastEntry();
        if (all == null) {
            return "?";
        }
        for (Map.Entry<Double, Double> e : b.entrySet()) {
            if (e.getValue() >= all.getValue()) {
                return e.getKey().isInfinite() ? "inf" : String.format("%.2f ms", e.getKey() * 1000);
            }
        }
        return "?";
    }
}
