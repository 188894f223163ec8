package org.jameskvs.testkit.smtp;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sends N messages over SMTP from several connections and counts reply codes. Every message has a
 * unique Message-ID {@code <prefix-i@kvs-load.test>}, so a sink can check each arrived exactly once.
 *
 * <p>As a program: {@code SmtpLoadSender host port count [connections] [recipient] [id-prefix]}; prints
 * {@code sent=N accepted=N rejected=N errors=N elapsed_ms=N start_epoch_ms=N codes={...}} and exits 0 when every
 * message got 250.
 */
public final class SmtpLoadSender {
    public static final String FROM = "sender@kvs-load.test";
    public static final String DEFAULT_RECIPIENT = "rcpt@sink.test";

    private final String host;
    private final int port;
    private final int timeoutMillis;

    public SmtpLoadSender(String host, int port, int timeoutMillis) {
        this.host = host;
        this.port = port;
        this.timeoutMillis = timeoutMillis;
    }

    public static String messageId(String prefix, int i) {
        return "<" + prefix + "-" + i + "@kvs-load.test>";
    }

    /** Sends messages {@code 0..count-1} over {@code connections} connections; bounded by the socket timeout. */
    public Result send(int count, int connections, String recipient, String idPrefix) throws InterruptedException {
        Map<Integer, AtomicInteger> codes = new ConcurrentHashMap<>();
        LongAdder errors = new LongAdder();
        AtomicInteger next = new AtomicInteger();
        long startedAtEpochMillis = System.currentTimeMillis();
        long start = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < connections; w++) {
            workers.add(pool.submit(() -> sendUntilDone(count, recipient, idPrefix, next, codes, errors)));
        }
        pool.shutdown();
        if (!pool.awaitTermination(Math.max(60_000L, (long) count * timeoutMillis / connections), TimeUnit.MILLISECONDS)) {
            pool.shutdownNow();
        }
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Map<Integer, Integer> snapshot = new TreeMap<>();
        codes.forEach((k, v) -> snapshot.put(k, v.get()));
        return new Result(count, snapshot, errors.intValue(), startedAtEpochMillis, elapsedMillis);
    }

    private void sendUntilDone(int count, String recipient, String idPrefix, AtomicInteger next,
                               Map<Integer, AtomicInteger> codes, LongAdder errors) {
        SmtpClient client = null;
        try {
            int i;
            while ((i = next.getAndIncrement()) < count) {
                try {
                    if (client == null) {
                        client = SmtpClient.connect(host, port, timeoutMillis);
                    }
                    String id = messageId(idPrefix, i);
                    int code = client.send(FROM, recipient, SmtpClient.message(FROM, recipient, id, "load " + i));
                    codes.computeIfAbsent(code, k -> new AtomicInteger()).incrementAndGet();
                } catch (IOException e) {
                    errors.increment();
                    closeQuietly(client);
                    client = null;
                }
            }
        } finally {
            closeQuietly(client);
        }
    }

    private static void closeQuietly(SmtpClient client) {
        if (client != null) {
            try {
                client.close();
            } catch (IOException ignored) {
                // best effort
            }
        }
    }

    /** What happened to a batch: reply codes by count, I/O errors, when it started, wall time. */
    public record Result(int sent, Map<Integer, Integer> codes, int errors, long startedAtEpochMillis, long elapsedMillis) {
        public int accepted() {
            return codes.getOrDefault(250, 0);
        }

        public int rejected() {
            return sent - accepted() - errors;
        }

        public String summary() {
            return "sent=" + sent + " accepted=" + accepted() + " rejected=" + rejected() + " errors=" + errors
                + " elapsed_ms=" + elapsedMillis + " start_epoch_ms=" + startedAtEpochMillis + " codes=" + codes;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: SmtpLoadSender host port count [connections] [recipient] [id-prefix]");
            System.exit(2);
        }
        int count = Integer.parseInt(args[2]);
        int connections = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        String recipient = args.length > 4 ? args[4] : DEFAULT_RECIPIENT;
        String prefix = args.length > 5 ? args[5] : "load-" + System.currentTimeMillis();
        Result result = new SmtpLoadSender(args[0], Integer.parseInt(args[1]), 30_000)
            .send(count, connections, recipient, prefix);
        System.out.println(result.summary());
        System.exit(result.accepted() == count ? 0 : 1);
    }
}
