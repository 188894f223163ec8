package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.Test;

/**
 * The audit of issue 12: James with no SMTP size limit ({@code maxmessagesize} 0) in front of a
 * real KVS server process (frame.maxBytes 64 MiB). A message the spool cannot store must be refused
 * for good (552, by the plug-in's SpoolSizeLimitHook), not with the 451 James gives a failed enqueue
 * (the sender would retry for ever); the largest message the hook lets through must be stored and
 * relayed. Two copies (the shipped configuration): the largest message is stored on both without
 * a node declared lost while its frame is on the wire (the replication counts a connection that is
 * taking our bytes as alive).
 */
class SpoolSizeLimitE2ETest {
    private static final String RECIPIENT = "rcpt@sink.test";
    /** kvs-spool's maxSmtpMessageBytes with james-conf's frameMaxBytes (64 MiB - 4 KiB - 64 KiB). */
    private static final long HOOK_LIMIT = (64L << 20) - 4096 - (64 << 10);

    @Test
    void withoutAnSmtpSizeLimitTheSpoolsOwnLimitIsAPermanentRefusal() throws Exception {
        String tooLarge = "<e2e-hook-too-large@kvs-load.test>";
        String largest = "<e2e-hook-largest@kvs-load.test>";
        try (ReplicatedJames rig = ReplicatedJames.start("size-limit", conf -> conf.maxMessageSizeKb(0))) {
            SmtpSink sink = rig.sink;
            JamesProcess james = rig.james;
            try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 120_000)) {
                assertThat(client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, tooLarge, 65L << 20, false))
                    .as("DATA of 65 MiB: %s\n%s", client.lastReply(), james.logTail(20)).isEqualTo(552);
                assertThat(client.lastReply()).anyMatch(line -> line.contains("spool's limit of " + HOOK_LIMIT));
                assertThat(client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, largest, HOOK_LIMIT - 4096, false))
                    .as("a message just under the hook's limit: %s\n%s", client.lastReply(), james.logTail(20)).isEqualTo(250);
            }
            List<String> missing = sink.awaitAll(List.of(largest), Duration.ofSeconds(120));
            assertThat(missing).as("the largest message was not relayed (%s)\n%s", sink.statsLine(), james.logTail(40)).isEmpty();
            assertThat(sink.count(largest)).isEqualTo(1);
            assertThat(sink.count(tooLarge)).isZero();
            assertThat(james.logText()).as("no node declared lost, no copy isolated while the large mail was stored")
                .doesNotContain("DATA LOSS").doesNotContain("isolate").doesNotContain("/ACTIVE NG");
        }
    }
}
