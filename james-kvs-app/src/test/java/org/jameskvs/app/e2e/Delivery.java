package org.jameskvs.app.e2e;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.jameskvs.testkit.smtp.SmtpSink;

/** Waiting (bounded) for the sink to have received given Message-IDs. */
final class Delivery {
    private Delivery() {
    }

    /** Waits until every id was received at least once; returns the ids still missing at the deadline. */
    static List<String> awaitAll(SmtpSink sink, List<String> ids, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        List<String> missing = ids;
        while (Instant.now().isBefore(deadline)) {
            missing = ids.stream().filter(id -> sink.count(id) == 0).toList();
            if (missing.isEmpty()) {
                return missing;
            }
            Thread.sleep(200);
        }
        return missing;
    }
}
