package org.jameskvs.app.e2e;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.ReportChart;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 13's isolation benchmark (not run by CI: tagged slow). Real James 3.8.1 with LaneDelivery, two
 * KVS server processes, {@code lanes.bench.domains} (default 1,000) destination domains on the per-domain
 * target. Three phases on the same James, each sending {@code lanes.bench.mails} (default 2,000) mails,
 * half to one heavy domain: the heavy domain accepts (the baseline), answers 421 to everything, or
 * never sends its greeting (the client's greeting timeout is RFC 5321's 5 min), after a warm-up phase
 * and with the baseline run again at the end. Prints, and writes to lanes-isolation.md with its chart lanes-isolation.png (in
 * {@code -Dlanes.report.dir}, default target/), the
 * healthy domains' mails/s and p99 latency and their ratios to the mean of the two baselines. Run:
 * <pre>
 * mvn -o -pl james-kvs-delivery package -DskipTests
 * mvn -o -pl james-kvs-delivery surefire:test -Dtest=LaneIsolationBenchE2ETest -Dtest.excludedGroups=none [-Dlanes.bench.mails=4000]
 * </pre>
 * It asserts only what must hold whatever the machine: every healthy mail arrived, the heavy domain
 * received nothing while it refused or stalled.
 */
@Tag("slow")
class LaneIsolationBenchE2ETest {
    private static final int DOMAINS = Integer.getInteger("lanes.bench.domains", 1_000);
    private static final int MAILS = Integer.getInteger("lanes.bench.mails", 2_000);
    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    /**
     * Suspends a lane by webadmin while mail for it keeps arriving, counts the connections opened to it
     * after the suspension answered, then resumes it and times the first delivery after the resume.
     */
    private static String reaction(JamesProcess james, DomainSmtpTarget target, String domain) throws Exception {
        LaneAdmin admin = new LaneAdmin(james.webadminPort());
        admin.suspend(domain, "1h");
        long connectionsAtSuspension = target.domain(domain).connections();
        int mails = 500;
        SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000).send(mails, 4, "rcpt@" + domain, "reaction");
        assertThat(sent.accepted()).as(sent.summary()).isEqualTo(mails);
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < mails; i++) {
            ids.add(SmtpLoadSender.messageId("reaction", i));
        }
        long opened = target.domain(domain).connections() - connectionsAtSuspension;
        long deliveredWhileSuspended = target.domain(domain).messageIds().stream().filter(ids::contains).count();
        long resumedAt = System.currentTimeMillis();
        admin.resume(domain);
        LaneJames.awaitOrFail(() -> target.domain(domain).messageIds().containsAll(ids), "the resumed lane delivered", TIMEOUT, james);
        long firstAfterResume = target.domain(domain).arrivals().entrySet().stream()
            .filter(e -> ids.contains(e.getKey())).mapToLong(Map.Entry::getValue).min().orElseThrow();
        return String.format("Reaction (%s, %d mails sent while it was suspended by webadmin): connections opened after the"
            + " suspension answered: %d; of those mails delivered while suspended: %d; first delivery %d ms after the resume"
            + " request was sent (held mail looks every 200 ms)", domain, mails, opened, deliveredWhileSuspended,
            firstAfterResume - resumedAt);
    }

    @Test
    void isolationRatio() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("lanes-bench-" + System.currentTimeMillis());
        Files.createDirectories(run);
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("heavy-accept.test", Behaviour.accept());
        behaviours.put("heavy-421.test", Behaviour.refuse421());
        behaviours.put("heavy-stall.test", Behaviour.stallGreeting());
        List<String> healthy = new ArrayList<>();
        for (int i = 0; i < DOMAINS - 3; i++) {
            healthy.add("d" + i + ".test");
            behaviours.put("d" + i + ".test", Behaviour.accept());
        }
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            try (KvsServerProcess node1 = KvsServerProcess.start(run.resolve("kvs-node1"));
                 KvsServerProcess node2 = KvsServerProcess.start(run.resolve("kvs-node2"));
                 JamesProcess james = LaneJames.start(run.resolve("james"), target, conf -> LaneConf.laneDelivery(conf
                     .kvsReplicated(node1.address(), node2.address(), KvsServerProcess.PASSWORD),
                     "<dedicatedDomains>heavy-accept.test, heavy-421.test, heavy-stall.test</dedicatedDomains>",
                     "<buckets>64</buckets>", "<concurrency>4</concurrency>", "<port>" + target.port() + "</port>",
                     "<retryDelays>1000, 5000, 60000</retryDelays>", "<maxAttempts>1000</maxAttempts>"))) {
                // A warm-up phase (JIT, connections), then the baseline before and after the two faults.
                IsolationPhase.Result warmUp = IsolationPhase.run("warm-up", james.smtpPort(), target, "heavy-accept.test", healthy, MAILS, 8, TIMEOUT);
                List<IsolationPhase.Result> results = new ArrayList<>();
                results.add(IsolationPhase.run("heavy-accepts", james.smtpPort(), target, "heavy-accept.test", healthy, MAILS, 8, TIMEOUT));
                results.add(IsolationPhase.run("heavy-421", james.smtpPort(), target, "heavy-421.test", healthy, MAILS, 8, TIMEOUT));
                results.add(IsolationPhase.run("heavy-stalls-greeting", james.smtpPort(), target, "heavy-stall.test", healthy, MAILS, 8, TIMEOUT));
                results.add(IsolationPhase.run("heavy-accepts-again", james.smtpPort(), target, "heavy-accept.test", healthy, MAILS, 8, TIMEOUT));

                String reaction = reaction(james, target, "heavy-accept.test");

                IsolationPhase.Result before = results.get(0);
                IsolationPhase.Result after = results.get(3);
                IsolationPhase.Result base = new IsolationPhase.Result("baseline (mean)", before.healthyMails(),
                    (before.healthyPerSecond() + after.healthyPerSecond()) / 2, (before.p50Millis() + after.p50Millis()) / 2,
                    (before.p99Millis() + after.p99Millis()) / 2, 0);
                StringBuilder report = new StringBuilder("# Lane isolation (LaneIsolationBenchE2ETest)\n\n")
                    .append(String.format("%d domains, %d mails per phase (half to the heavy domain), 2 KVS nodes (two copies, fsync none), James 3.8.1, concurrency 4 per lane, 64 buckets%n%n```%n", DOMAINS, MAILS))
                    .append(warmUp.line()).append('\n');
                for (IsolationPhase.Result r : results) {
                    report.append(r.line()).append('\n');
                }
                report.append("```\n\n").append(reaction).append("\n\n");
                ReportChart chart = ReportChart.bars("Other domains with a bad domain vs baseline (" + MAILS + " mails per phase)",
                    null, "ratio to the baseline (mean of the two heavy-accepts phases)");
                for (IsolationPhase.Result r : results.subList(1, 3)) {
                    double rate = r.healthyPerSecond() / base.healthyPerSecond();
                    double p99 = (double) r.p99Millis() / Math.max(1, base.p99Millis());
                    report.append(String.format("- %s: healthy mails/s ratio %.2f (target >= 0.95), p99 ratio %.2f (target <= 1.2)%n",
                        r.name(), rate, p99));
                    chart.bar("mails/s ratio (target >= 0.95)", r.name(), rate).bar("p99 ratio (target <= 1.2)", r.name(), p99);
                }
                report.append(String.format("%nLoad average at the end: %.1f on %d cores.%n",
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                    Runtime.getRuntime().availableProcessors()));
                System.out.println(report);
                LaneReport.write("isolation", report.toString(), chart,
                    "other domains' mails/s and p99 with the bad domain, as ratios to the baseline");

                assertThat(target.domain("heavy-421.test").accepted()).isZero();
                assertThat(target.domain("heavy-stall.test").accepted()).isZero();
            }
        }
    }
}
