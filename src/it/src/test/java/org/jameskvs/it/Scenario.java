package org.jameskvs.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;

import org.jameskvs.testkit.smtp.SmtpSink;

/**
 * The bookkeeping of a scenario: which mails got a 250 (accepted) and how often each reached the sink.
 * delivered = accepted mails seen at least once; lost = accepted mails never seen; duplicated = extra
 * copies of accepted mails. Mails whose transaction broke without an answer (unknown) are reported on
 * their own: delivering them is allowed, not required.
 */
final class Scenario {
    static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(Integer.getInteger("it.deliveryTimeoutSeconds", 180));

    record Result(String scenario, int accepted, int delivered, int lost, long duplicated, int unknown,
                  int unknownDelivered, String extra) {
        String line() {
            return "scenario=" + scenario + " accepted=" + accepted + " delivered=" + delivered + " lost=" + lost
                + " duplicated=" + duplicated + " unknown=" + unknown + " unknownDelivered=" + unknownDelivered
                + (extra.isEmpty() ? "" : " " + extra);
        }
    }

    private Scenario() {
    }

    /**
     * Waits (bounded by {@link #DELIVERY_TIMEOUT}) until every accepted mail reached the sink, then 2 s more
     * for late duplicates; prints the scenario line and appends it to {@code <e2e.workdir>/scenarios.txt}.
     */
    static Result account(String scenario, SmtpSink sink, Collection<String> accepted, Collection<String> unknown,
                          String extra) throws InterruptedException {
        List<String> missing = sink.awaitAll(accepted, DELIVERY_TIMEOUT);
        Thread.sleep(2_000);
        missing = accepted.stream().filter(id -> sink.count(id) == 0).toList();
        int delivered = accepted.size() - missing.size();
        long duplicated = accepted.stream().mapToLong(id -> Math.max(0, sink.count(id) - 1)).sum();
        int unknownDelivered = (int) unknown.stream().filter(id -> sink.count(id) > 0).count();
        Result result = new Result(scenario, accepted.size(), delivered, missing.size(), duplicated, unknown.size(),
            unknownDelivered, extra + (missing.isEmpty() ? "" : " missing=" + missing.subList(0, Math.min(20, missing.size()))));
        report(result.line());
        return result;
    }

    /** Prints a line and appends it to {@code <e2e.workdir>/scenarios.txt}. */
    static void report(String line) {
        System.out.println(line);
        Path file = workdir().resolve("scenarios.txt");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, Instant.now() + " " + line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("cannot append to " + file + ": " + e);
        }
    }

    static Path workdir() {
        return Path.of(System.getProperty("e2e.workdir", "target/it"));
    }

    /** A fresh directory for one test run under the work directory. */
    static Path runDirectory(String name) {
        return workdir().resolve(name + "-" + System.currentTimeMillis());
    }
}
