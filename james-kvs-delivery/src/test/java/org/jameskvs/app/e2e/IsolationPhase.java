package org.jameskvs.app.e2e;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;

/**
 * One phase of the isolation benchmark: {@code mails} sent into James, every other one to the heavy
 * domain and the rest round-robin over the healthy domains, then timed until every healthy mail has
 * arrived at the target. Gives the healthy domains' delivered mails/s and enqueue-to-delivery latency
 * (from James's 250 to the target's 250; one clock, one JVM).
 */
final class IsolationPhase {
    record Result(String name, int healthyMails, double healthyPerSecond, long p50Millis, long p99Millis, long heavyAccepted) {
        String line() {
            return String.format("%-22s healthy mails %5d  %8.1f mails/s  p50 %6d ms  p99 %6d ms  heavy domain accepted %d",
                name, healthyMails, healthyPerSecond, p50Millis, p99Millis, heavyAccepted);
        }
    }

    private IsolationPhase() {
    }

    static Result run(String name, int smtpPort, DomainSmtpTarget target, String heavy, List<String> healthy, int mails,
                      int senders, Duration timeout) throws Exception {
        Map<String, Long> sentAt = new ConcurrentHashMap<>();
        Map<String, String> domainOf = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        long start = System.currentTimeMillis();
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        List<Future<?>> work = new ArrayList<>();
        for (int s = 0; s < senders; s++) {
            work.add(pool.submit(() -> {
                try (SmtpClient client = SmtpClient.connect("127.0.0.1", smtpPort, 60_000)) {
                    int i;
                    while ((i = next.getAndIncrement()) < mails) {
                        String domain = i % 2 == 0 ? heavy : healthy.get((i / 2) % healthy.size());
                        String id = SmtpLoadSender.messageId("bench-" + name, i);
                        String to = "rcpt" + i + "@" + domain;
                        int code = client.send(SmtpLoadSender.FROM, to, SmtpClient.message(SmtpLoadSender.FROM, to, id, name));
                        if (code == 250) {
                            if (!domain.equals(heavy)) {
                                sentAt.put(id, System.currentTimeMillis());
                                domainOf.put(id, domain);
                            }
                        } else {
                            failed.incrementAndGet();
                        }
                    }
                } catch (IOException e) {
                    failed.incrementAndGet();
                }
                return null;
            }));
        }
        pool.shutdown();
        for (Future<?> f : work) {
            f.get();
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(name + ": " + failed.get() + " mails not accepted by James");
        }
        Instant deadline = Instant.now().plus(timeout);
        List<Long> latencies = new ArrayList<>();
        long lastArrival = 0;
        while (true) {
            latencies.clear();
            lastArrival = 0;
            int arrived = 0;
            Map<String, Map<String, Long>> arrivalsByDomain = new ConcurrentHashMap<>();
            for (Map.Entry<String, Long> sent : sentAt.entrySet()) {
                Long at = arrivalsByDomain.computeIfAbsent(domainOf.get(sent.getKey()), d -> target.domain(d).arrivals())
                    .get(sent.getKey());
                if (at != null) {
                    arrived++;
                    latencies.add(at - sent.getValue());
                    lastArrival = Math.max(lastArrival, at);
                }
            }
            if (arrived == sentAt.size()) {
                break;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError(name + ": " + arrived + " of " + sentAt.size() + " healthy mails arrived within " + timeout);
            }
            Thread.sleep(200);
        }
        latencies.sort(Long::compare);
        double seconds = Math.max(1, lastArrival - start) / 1000.0;
        return new Result(name, sentAt.size(), sentAt.size() / seconds, percentile(latencies, 0.50), percentile(latencies, 0.99),
            target.domain(heavy).accepted());
    }

    private static long percentile(List<Long> sorted, double p) {
        return sorted.isEmpty() ? 0 : sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(p * sorted.size()) - 1));
    }
}
