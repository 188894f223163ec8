package org.jameskvs.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Redis measured with its own C client ({@code redis-benchmark}, one connection, pipeline depth
 * 1,000), so the comparison does not depend on how fast a Java Redis client is. A store+delete
 * transaction is one RPUSH plus one LPOP: tx/s = 1 / (1/rpush_rate + 1/lpop_rate).
 */
final class RedisBenchmarkTool {
    private RedisBenchmarkTool() {
    }

    /** @return transactions/s, or -1 when redis-benchmark is not installed. */
    static double storeDeleteTxPerSecond(boolean aofEverySec, int size, int requests) throws Exception {
        try (ServerProcesses.Running redis = ServerProcesses.redis(aofEverySec ? RedisPersistence.AOF_EVERYSEC : RedisPersistence.NONE)) {
            Process p = new ProcessBuilder("redis-benchmark", "-h", "127.0.0.1", "-p", Integer.toString(redis.port()),
                    "-c", "1", "-P", "1000", "-n", Integer.toString(requests), "-d", Integer.toString(size),
                    "-t", "rpush,lpop", "--csv").redirectErrorStream(true).start();
            Map<String, Double> rates = new HashMap<>();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    String[] f = line.replace("\"", "").split(",");
                    if (f.length >= 2 && (f[0].startsWith("RPUSH") || f[0].startsWith("LPOP"))) {
                        rates.put(f[0].startsWith("RPUSH") ? "rpush" : "lpop", Double.parseDouble(f[1]));
                    }
                }
            }
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("redis-benchmark did not finish in 120 s");
            }
            if (!rates.containsKey("rpush") || !rates.containsKey("lpop")) {
                throw new IllegalStateException("redis-benchmark printed no RPUSH/LPOP rates");
            }
            return 1 / (1 / rates.get("rpush") + 1 / rates.get("lpop"));
        } catch (java.io.IOException e) {
            if (e.getMessage() != null && e.getMessage().contains("redis-benchmark")) {
                return -1;
            }
            throw e;
        }
    }
}
