package org.jameskvs.app.e2e;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.junit.jupiter.api.Test;

/**
 * A mail leaves its lane queue only after the remote 250: James (LaneDelivery, two KVS nodes) is
 * killed with SIGKILL while its lanes are delivering, and a new James on the same KVS nodes delivers
 * every mail that was not yet delivered. 0 lost; a mail may arrive twice when the kill came between the
 * target's 250 and the queue delete (or between the lane enqueue and the spool delete): counted.
 */
class LaneJamesKillE2ETest {
    private static final int DOMAINS = 4;
    private static final int PER_DOMAIN = 100;
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    @Test
    void killNineWhileDeliveringLosesNothing() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("lanes-kill-" + System.currentTimeMillis());
        Files.createDirectories(run);
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        for (int i = 0; i < DOMAINS; i++) {
            behaviours.put("k" + i + ".test", Behaviour.slowData(Duration.ofMillis(40)));
        }
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            try (KvsServerProcess node1 = KvsServerProcess.start(run.resolve("kvs-node1"));
                 KvsServerProcess node2 = KvsServerProcess.start(run.resolve("kvs-node2"))) {
                Set<String> ids = new HashSet<>();
                long deliveredAtKill;
                try (JamesProcess james = LaneJames.start(run.resolve("james-1"), target, conf -> configure(conf, node1, node2, target))) {
                    SmtpLoadSender sender = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000);
                    for (DomainSmtpTarget.Domain domain : target.domains()) {
                        SmtpLoadSender.Result sent = sender.send(PER_DOMAIN, 4, "rcpt@" + domain.name(), "kill-" + domain.name());
                        assertThat(sent.accepted()).as(sent.summary()).isEqualTo(PER_DOMAIN);
                        IntStream.range(0, PER_DOMAIN).forEach(i -> ids.add(SmtpLoadSender.messageId("kill-" + domain.name(), i)));
                    }
                    awaitOrFail(() -> accepted(target) >= PER_DOMAIN, "deliveries under way", james);
                    LaneJames.kill(run.resolve("james-1"));
                    deliveredAtKill = accepted(target);
                }
                assertThat(deliveredAtKill).as("killed before everything was delivered").isLessThan((long) DOMAINS * PER_DOMAIN);
                try (JamesProcess james = LaneJames.start(run.resolve("james-2"), target, conf -> configure(conf, node1, node2, target))) {
                    awaitOrFail(() -> delivered(target).containsAll(ids), "every mail delivered after the restart", james);
                }
                long duplicates = accepted(target) - delivered(target).size();
                System.out.printf("LaneJamesKillE2ETest: %d mails, %d delivered at the kill, all %d delivered after the restart, %d twice%n",
                    ids.size(), deliveredAtKill, delivered(target).size(), duplicates);
                assertThat(delivered(target)).isEqualTo(ids);
                for (DomainSmtpTarget.Domain domain : target.domains()) {
                    assertThat(domain.maxConcurrentConnections()).as(domain.name()).isLessThanOrEqualTo(2);
                }
            }
        }
    }

    private static JamesConf configure(JamesConf conf, KvsServerProcess node1, KvsServerProcess node2, DomainSmtpTarget target) {
        return LaneConf.laneDelivery(conf.kvsReplicated(node1.address(), node2.address(), KvsServerProcess.PASSWORD),
            "<dedicatedDomains>k0.test</dedicatedDomains>", "<buckets>4</buckets>", "<concurrency>2</concurrency>",
            "<port>" + target.port() + "</port>", "<retryDelays>500</retryDelays>");
    }

    private static long accepted(DomainSmtpTarget target) {
        return target.domains().stream().mapToLong(DomainSmtpTarget.Domain::accepted).sum();
    }

    private static Set<String> delivered(DomainSmtpTarget target) {
        Set<String> all = new HashSet<>();
        target.domains().forEach(d -> all.addAll(d.messageIds()));
        return all;
    }

    private static void awaitOrFail(LaneJames.Check check, String what, JamesProcess james) throws Exception {
        LaneJames.awaitOrFail(check, what, TIMEOUT, james);
    }
}
