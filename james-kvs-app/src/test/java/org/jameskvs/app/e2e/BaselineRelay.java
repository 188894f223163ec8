package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.WebAdmin;

import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;

/**
 * What a benchmark baseline must do: the same James and james-conf with one of James's stock queues
 * ({@code -Dkvs.queue=memory} here; {@code activemq} in james-kvs-bench, whose lib holds ActiveMQ)
 * starts and relays every mail exactly once. No KVS module is installed then, so the kvs:// error
 * repository becomes a memory:// one.
 */
final class BaselineRelay {
    private static final int MAILS = 50;

    private BaselineRelay() {
    }

    static void relaysEveryMailExactlyOnce(String queue) throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve(queue + "-" + System.currentTimeMillis());
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
             JamesProcess james = JamesProcess.start(run, queue, sink.port(), JamesConf::withoutKvsRepository)) {
            SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
                .send(MAILS, 4, "rcpt@sink.test", "baseline-" + queue);
            assertThat(sent.accepted()).as(sent.summary()).isEqualTo(MAILS);
            List<String> ids = IntStream.range(0, MAILS).mapToObj(i -> SmtpLoadSender.messageId("baseline-" + queue, i)).toList();
            assertThat(sink.awaitAll(ids, Duration.ofSeconds(120))).as(james.logTail(40)).isEmpty();
            Thread.sleep(1_000);
            assertThat(sink.duplicates()).as(sink.statsLine()).isZero();
            assertThat(new WebAdmin(james.webadminPort()).get("/mailQueues")).contains("\"spool\"", "\"outgoing\"");
            assertThat(james.logText()).contains("with the " + queue + " mail queue");
        }
    }
}
