package org.jameskvs.it;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntPredicate;

import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;

/**
 * A running SMTP load that remembers the outcome of every mail, for scenarios where faults happen
 * while it runs: {@code sessions} concurrent SMTP sessions (kvs-testkit's SmtpClient, one mail per
 * transaction, sessions kept open) send mails {@code <prefix-i@kvs-load.test>} until {@link #stop()}
 * or {@code maxMails}. Each mail ends as one of:
 * <ul>
 * <li>ACCEPTED: DATA answered 250, the server took responsibility: it must be delivered;</li>
 * <li>REFUSED: a 4xx (temporary; the client keeps the mail);</li>
 * <li>REJECTED: a 5xx;</li>
 * <li>UNKNOWN: the connection broke inside the transaction (e.g. James killed): no answer, so the
 * mail may or may not have been taken; it does not count as accepted.</li>
 * </ul>
 * A session that cannot connect (James down) waits {@code 200 ms} and tries again, without using a
 * mail number. Every socket read is bounded by {@code timeoutMillis}.
 */
final class TrackingLoad implements AutoCloseable {
    enum Outcome { ACCEPTED, REFUSED, REJECTED, UNKNOWN }

    static final String RECIPIENT = "rcpt@sink.test";

    private final String prefix;
    private final int port;
    private final int maxMails;
    private final long pauseMillis;
    private final int timeoutMillis;
    private final Map<String, Outcome> outcomes = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> codes = new ConcurrentHashMap<>();
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger accepted = new AtomicInteger();
    private final LongAdder connectFailures = new LongAdder();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final List<Thread> workers = new ArrayList<>();
    private volatile IntPredicate codeCheck = code -> true;
    private final List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());

    /**
     * @param pauseMillis pause of each session between two mails (paces the load so that it spans the fault)
     */
    TrackingLoad(String prefix, int port, int sessions, int maxMails, long pauseMillis, int timeoutMillis) {
        this.prefix = prefix;
        this.port = port;
        this.maxMails = maxMails;
        this.pauseMillis = pauseMillis;
        this.timeoutMillis = timeoutMillis;
        for (int s = 0; s < sessions; s++) {
            Thread t = new Thread(this::session, "load-" + prefix + "-" + s);
            t.setDaemon(true);
            workers.add(t);
        }
    }

    private volatile long startNanos;
    private volatile long stopNanos;

    TrackingLoad start() {
        startNanos = System.nanoTime();
        workers.forEach(Thread::start);
        return this;
    }

    /** From now on every reply code must satisfy {@code check}; violations are collected (see {@link #violations()}). */
    void expectCodes(IntPredicate check) {
        this.codeCheck = check;
    }

    List<String> violations() {
        return List.copyOf(violations);
    }

    private void session() {
        SmtpClient client = null;
        try {
            while (!stopped.get()) {
                if (client == null) {
                    try {
                        client = SmtpClient.connect("127.0.0.1", port, timeoutMillis);
                    } catch (IOException e) {
                        connectFailures.increment();
                        sleep(200);
                        continue;
                    }
                }
                int i = next.getAndIncrement();
                if (i >= maxMails) {
                    return;
                }
                String id = SmtpLoadSender.messageId(prefix, i);
                IntPredicate check = codeCheck;
                try {
                    int code = client.send(SmtpLoadSender.FROM, RECIPIENT, SmtpClient.message(SmtpLoadSender.FROM, RECIPIENT, id, "load " + i));
                    codes.computeIfAbsent(code, k -> new AtomicInteger()).incrementAndGet();
                    Outcome outcome = code == 250 ? Outcome.ACCEPTED : code >= 400 && code < 500 ? Outcome.REFUSED : Outcome.REJECTED;
                    outcomes.put(id, outcome);
                    if (outcome == Outcome.ACCEPTED) {
                        accepted.incrementAndGet();
                    }
                    if (!check.test(code)) {
                        violations.add(id + " answered " + code);
                    }
                } catch (IOException e) {
                    outcomes.put(id, Outcome.UNKNOWN);
                    codes.computeIfAbsent(-1, k -> new AtomicInteger()).incrementAndGet();
                    if (!check.test(-1)) {
                        violations.add(id + ": " + e);
                    }
                    close(client);
                    client = null;
                    sleep(100);
                }
                if (pauseMillis > 0) {
                    sleep(pauseMillis);
                }
            }
        } finally {
            close(client);
        }
    }

    /** Waits (bounded) until {@code n} mails were accepted in all; false at the deadline or if the load ended. */
    boolean awaitAccepted(int n, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (accepted.get() < n && Instant.now().isBefore(deadline)) {
            if (workers.stream().noneMatch(Thread::isAlive)) {
                return accepted.get() >= n;
            }
            Thread.sleep(20);
        }
        return accepted.get() >= n;
    }

    /** Waits (bounded) until {@code n} more transactions have an outcome. */
    boolean awaitOutcomes(int n, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (outcomes.size() < n && Instant.now().isBefore(deadline)) {
            Thread.sleep(20);
        }
        return outcomes.size() >= n;
    }

    int acceptedCount() {
        return accepted.get();
    }

    /** Mail numbers handed to transactions so far: a transaction started later gets this number or a higher one. */
    int started() {
        return next.get();
    }

    /** Mail number {@code i}'s Message-ID. */
    String id(int i) {
        return SmtpLoadSender.messageId(prefix, i);
    }

    int outcomeCount() {
        return outcomes.size();
    }

    /** Stops the sessions (each finishes its current transaction; bounded by the socket timeout). */
    void stop() throws InterruptedException {
        stopped.set(true);
        if (stopNanos == 0) {
            stopNanos = System.nanoTime();
        }
        for (Thread t : workers) {
            t.join(timeoutMillis + 5_000L);
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " still running after " + (timeoutMillis + 5_000) + " ms");
            }
        }
    }

    /** Waits for every session to finish on its own ({@code maxMails} reached), bounded. */
    void awaitDone(Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        for (Thread t : workers) {
            t.join(Math.max(1, Duration.between(Instant.now(), deadline).toMillis()));
        }
        stopNanos = System.nanoTime();
        if (workers.stream().anyMatch(Thread::isAlive)) {
            stop();
        }
    }

    List<String> ids(Outcome outcome) {
        return outcomes.entrySet().stream().filter(e -> e.getValue() == outcome).map(Map.Entry::getKey).sorted().toList();
    }

    Map<String, Outcome> outcomes() {
        return Map.copyOf(outcomes);
    }

    long connectFailures() {
        return connectFailures.sum();
    }

    /** Reply codes with counts; -1 = connection broke inside a transaction. */
    Map<Integer, Integer> codes() {
        Map<Integer, Integer> snapshot = new TreeMap<>();
        codes.forEach((k, v) -> snapshot.put(k, v.get()));
        return snapshot;
    }

    String summary() {
        long end = stopNanos == 0 ? System.nanoTime() : stopNanos;
        return "prefix=" + prefix + " transactions=" + outcomes.size() + " codes=" + codes() + " connectFailures=" + connectFailures()
            + " elapsed_ms=" + (end - startNanos) / 1_000_000;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void close(SmtpClient client) {
        if (client != null) {
            try {
                client.close();
            } catch (IOException ignored) {
                // best effort
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
