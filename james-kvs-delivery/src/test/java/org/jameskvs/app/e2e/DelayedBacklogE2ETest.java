package org.jameskvs.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.server.core.MailImpl;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.jameskvs.delivery.LaneDeliveryConfig;
import org.jameskvs.delivery.LaneRegistry;
import org.jameskvs.delivery.LaneSpool;
import org.jameskvs.delivery.MxResolver;
import org.jameskvs.delivery.TestConfigs;
import org.jameskvs.delivery.TestMails;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.ReportChart;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Issue 13's "delays at scale" on real parts: lanes on KVS mail queues (a real KVS server process,
 * this JVM's KVS client), {@code lanes.delayed} (default 100,000) mails waiting an hour in the delay
 * queue of the first retry delay, and a flow of {@code lanes.ready} ready mails to a domain that
 * accepts. The ready flow's mails/s before the backlog, twice with it (the first right after the
 * backlog was written, while the machine still writes it back to disk), and once it was cleared (as
 * warm as the runs with it: the fair baseline), and this JVM's live heap before and after the backlog was
 * stored, are printed and written (lanes-delays.md and its chart lanes-delays.png, {@link LaneReport}). Asserted: no delayed mail leaves its delay queue
 * early, every ready mail arrives, and the heap grows by at most the issue's budget (64 MB per
 * 1,000,000 delayed mails) while they wait.
 *
 * <p>The delayed mails are put into the delay queue directly (as {@code DelayTiers.park} stores a
 * mail after its first temporary failure: the mail with its due time), not by failing deliveries, to
 * reach the size in reasonable time. One million: {@code -Dlanes.delayed=1000000}.
 */
class DelayedBacklogE2ETest {
    private static final int DELAYED = Integer.getInteger("lanes.delayed", 100_000);
    private static final int READY = Integer.getInteger("lanes.ready", 5_000);
    private static final String DOMAIN = "ready.test";
    /** DelayTiers' attribute: when the mail is due (epoch ms). */
    private static final AttributeName DUE_AT = AttributeName.of("org.jameskvs.delivery.dueAtEpochMillis");
    private static final long ISSUE_BUDGET_BYTES_PER_DELAYED_MAIL = 64L * 1024 * 1024 / 1_000_000;
    private static final Duration TIMEOUT = Duration.ofMinutes(30);

    @Test
    void aDelayedBacklogCostsTheReadyFlowLittleAndTheHeapNothingPerMail() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("delayed-" + System.currentTimeMillis());
        Files.createDirectories(run);
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put(DOMAIN, Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours);
             KvsServerProcess kvs = KvsServerProcess.start(run.resolve("kvs"))) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", DOMAIN, "buckets", "1",
                "concurrency", "8", "initialConcurrency", "8", "maxDeliveriesPerConnection", "1000",
                "retryDelays", "3600000", "port", String.valueOf(target.port()));
            MxResolver resolver = domain -> List.of(target.domain(domain).address());
            try (KvsLaneQueues lanesQueues = KvsLaneQueues.connect(kvs, "delayed-bench");
                 LaneSpool spool = new LaneSpool(config, lanesQueues.factory(), resolver, (mail, reply) -> { }, new LaneRegistry(),
                     Clock.systemUTC())) {
                ManageableMailQueue delayQueue = (ManageableMailQueue) spool.delayQueues().get(0);

                readyFlow(spool, target, "warm-up", 0); // JIT, connections: not part of either figure
                double before = readyFlow(spool, target, "before", READY);
                long heapEmpty = liveHeap();

                long parkStart = System.nanoTime();
                park(delayQueue, DELAYED);
                double parkSeconds = (System.nanoTime() - parkStart) / 1e9;
                long heapDelayed = liveHeap();

                double withFirst = readyFlow(spool, target, "with", 2 * READY); // right after the backlog was written
                double with = readyFlow(spool, target, "with-again", 3 * READY);
                long heapAfter = liveHeap();
                long stillDelayed = delayQueue.getSize();
                delayQueue.clear();
                double after = readyFlow(spool, target, "after", 4 * READY); // warm like "with", no backlog

                System.out.printf("DelayedBacklogE2ETest: %,d delayed mails stored in %.1f s (%.0f/s); ready flow %,d mails:"
                        + " %.0f mails/s before them, %.0f then %.0f mails/s with them, %.0f mails/s once they were cleared"
                        + " (with / cleared: %.3fx); live heap %.1f MB empty, %.1f MB with"
                        + " them (%+.1f bytes per delayed mail), %.1f MB after the second ready flow; %,d still in the delay"
                        + " queue%n",
                    DELAYED, parkSeconds, DELAYED / parkSeconds, READY, before, withFirst, with, after, with / after, heapEmpty / 1e6,
                    heapDelayed / 1e6, (heapDelayed - heapEmpty) / (double) DELAYED, heapAfter / 1e6, stillDelayed);
                ReportChart chart = ReportChart.bars(String.format("Ready flow (%,d mails) with %,d delayed mails waiting: %.2fx",
                        READY, DELAYED, with / after), null, "ready mails/s")
                    .bar("mails/s", "before the backlog", before).bar("mails/s", "with it, just written", withFirst)
                    .bar("mails/s", "with it, again", with).bar("mails/s", "once cleared", after);
                LaneReport.write("delays", String.format("# Delayed mail at scale (DelayedBacklogE2ETest)%n%n"
                        + "| N delayed | stored in | ready mails/s before N / with N (just written, again) / N cleared | live heap empty -> with N | still delayed |%n"
                        + "|---|---|---|---|---|%n| %,d | %.1f s | %.0f / %.0f then %.0f / %.0f (**%.2fx**) | %.1f MB -> %.1f MB | %,d |%n%n"
                        + "Load average at the end: %.1f on %d cores.%n",
                    DELAYED, parkSeconds, before, withFirst, with, after, with / after, heapEmpty / 1e6, heapDelayed / 1e6, stillDelayed,
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                    Runtime.getRuntime().availableProcessors()), chart, "ready throughput with vs without the delayed backlog");
                assertThat(stillDelayed).as("delayed mails still waiting").isEqualTo(DELAYED);
                assertThat(target.domain(DOMAIN).distinctMessageIds()).isEqualTo(5 * READY);
                assertThat(heapDelayed - heapEmpty).as("heap growth with %,d delayed mails", DELAYED)
                    .isLessThanOrEqualTo(ISSUE_BUDGET_BYTES_PER_DELAYED_MAIL * DELAYED);
            }
        }
    }

    /** Enqueues {@code READY} mails to the accepting domain; returns mails/s from the first enqueue to the last arrival. */
    private static double readyFlow(LaneSpool spool, DomainSmtpTarget target, String tag, int alreadyDelivered) throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < READY; i++) {
            MailImpl mail = TestMails.mail(tag + i, TestMails.messageId(tag, i), "r" + i + "@" + DOMAIN);
            spool.enqueue(mail);
            mail.dispose();
        }
        Waits.until(() -> target.domain(DOMAIN).distinctMessageIds() == alreadyDelivered + READY, READY + " ready mails delivered (" + tag + ")", TIMEOUT);
        return READY / ((System.nanoTime() - start) / 1e9);
    }

    /** Stores {@code count} mails due in an hour in the delay queue (64 enqueues in flight). */
    private static void park(MailQueue delayQueue, int count) {
        long dueAt = System.currentTimeMillis() + Duration.ofHours(1).toMillis();
        Flux.range(0, count)
            .flatMap(i -> Mono.fromCallable(() -> {
                MailImpl mail = TestMails.mail("delayed" + i, TestMails.messageId("delayed", i), "d" + i + "@" + DOMAIN);
                mail.setAttribute(new Attribute(DUE_AT, AttributeValue.of(dueAt)));
                return mail;
            }).flatMap(mail -> Mono.from(delayQueue.enqueueReactive(mail)).doFinally(s -> mail.dispose())), 64)
            .blockLast(TIMEOUT);
    }

    private static long liveHeap() throws InterruptedException {
        return KvsLaneQueues.liveHeap();
    }
}
