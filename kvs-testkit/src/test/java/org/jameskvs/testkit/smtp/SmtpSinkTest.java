package org.jameskvs.testkit.smtp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SmtpSinkTest {

    @Test
    void countsEachMessageIdAndDuplicates() throws Exception {
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
             SmtpClient client = SmtpClient.connect("127.0.0.1", sink.port(), 10_000)) {
            assertThat(client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<1@t>", "one"))).isEqualTo(250);
            assertThat(client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<2@t>", "two"))).isEqualTo(250);
            assertThat(client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<1@t>", "again"))).isEqualTo(250);

            assertThat(sink.messages()).isEqualTo(3);
            assertThat(sink.distinct()).isEqualTo(2);
            assertThat(sink.duplicates()).isEqualTo(1);
            assertThat(sink.count("<1@t>")).isEqualTo(2);
            assertThat(sink.count("<2@t>")).isEqualTo(1);
        }
    }

    @Test
    void loadSenderCountsRepliesAndUsesUniqueIds() throws Exception {
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER)) {
            SmtpLoadSender.Result result = new SmtpLoadSender("127.0.0.1", sink.port(), 10_000).send(100, 4, "r@y.test", "unit");
            assertThat(result.accepted()).as(result.summary()).isEqualTo(100);
            assertThat(sink.distinct()).isEqualTo(100);
            assertThat(sink.duplicates()).isZero();
        }
    }

    @Test
    void dotStuffedLinesAreNotTheEndOfData() throws Exception {
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
             SmtpClient client = SmtpClient.connect("127.0.0.1", sink.port(), 10_000)) {
            String message = SmtpClient.message("a@x.test", "b@y.test", "<dots@t>", "dots") + "\n.\n..\n.end";
            assertThat(client.send("a@x.test", "b@y.test", message)).isEqualTo(250);
            assertThat(client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<next@t>", "next"))).isEqualTo(250);
            assertThat(sink.count("<dots@t>")).isEqualTo(1);
            assertThat(sink.count("<next@t>")).isEqualTo(1);
        }
    }

    @Test
    void deferAllAnswers451AndRecordsNothing() throws Exception {
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
             SmtpClient client = SmtpClient.connect("127.0.0.1", sink.port(), 10_000)) {
            sink.deferAll(true);
            assertThat(client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<d@t>", "d"))).isEqualTo(451);
            sink.deferAll(false);
            assertThat(client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<d@t>", "d"))).isEqualTo(250);
            assertThat(sink.deferred()).isEqualTo(1);
            assertThat(sink.count("<d@t>")).isEqualTo(1);
        }
    }

    @Test
    void holdAllKeepsNewSessionsWaitingForTheGreetingUntilReleased() throws Exception {
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER)) {
            sink.holdAll(true);
            // A client that waits 500 ms for the greeting gives up: nothing is answered while held.
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> SmtpClient.connect("127.0.0.1", sink.port(), 500))
                .isInstanceOf(java.net.SocketTimeoutException.class);
            java.util.concurrent.CompletableFuture<Integer> held = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try (SmtpClient client = SmtpClient.connect("127.0.0.1", sink.port(), 30_000)) {
                    return client.send("a@x.test", "b@y.test", SmtpClient.message("a@x.test", "b@y.test", "<h@t>", "h"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            sink.holdAll(false);
            assertThat(held.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(250);
            assertThat(sink.count("<h@t>")).isEqualTo(1);
            assertThat(sink.firstReceivedNanos("<h@t>")).isNotNull();
        }
    }
}
