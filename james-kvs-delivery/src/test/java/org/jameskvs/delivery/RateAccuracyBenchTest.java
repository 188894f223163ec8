package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How close a lane keeps to its maxMessageRate (issue 13's "rate within +-5 % over 60 s windows"), one
 * James node, in this JVM on James's memory queues: {@code lanes.rate.perSecond} (default 50) for
 * {@code lanes.rate.seconds} (default 120) with a backlog always waiting; prints the delivered rate of
 * each 60 s window (by the target's arrival times). Tagged slow (2 minutes):
 * {@code mvn -o -pl james-kvs-delivery test -Dtest=RateAccuracyBenchTest -Dtest.excludedGroups=none}.
 * Asserts the band: every whole window within +-5 % of the rate. Not "never one mail more than
 * the rate allows": the pacer spaces the starts of deliveries ({@link RatePacer}), the target counts
 * arrivals, and a window anchored on a first arrival that took longer than later ones (its connection
 * was new) holds a mail or two more than rate x 60 (3,003 of 3,000 in one run).
 */
@Tag("slow")
class RateAccuracyBenchTest {
    private static final int RATE = Integer.getInteger("lanes.rate.perSecond", 50);
    private static final int SECONDS = Integer.getInteger("lanes.rate.seconds", 120);

    @Test
    void deliveredRatePerMinute() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("paced.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", "paced.test", "buckets", "1",
                "concurrency", "4", "maxMessageRate", String.valueOf(RATE), "port", String.valueOf(target.port()));
            int mails = RATE * SECONDS;
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, new LaneRegistry())) {
                for (int i = 0; i < mails; i++) {
                    spool.enqueue(TestMails.mail("m" + i, TestMails.messageId("rate", i), "r" + i + "@paced.test"));
                }
                await(() -> target.domain("paced.test").accepted() == mails, mails + " mails delivered");
            }
            List<Long> arrivals = new ArrayList<>(target.domain("paced.test").arrivals().values());
            arrivals.sort(Long::compare);
            long start = arrivals.get(0);
            StringBuilder report = new StringBuilder();
            List<Long> counts = new ArrayList<>();
            for (long window = 0; (window + 1) * 60_000 <= arrivals.get(arrivals.size() - 1) - start; window++) {
                long from = start + window * 60_000;
                long count = arrivals.stream().filter(t -> t >= from && t < from + 60_000).count();
                counts.add(count);
                double rate = count / 60.0;
                report.append(String.format("window %d: %d mails, %.2f mails/s (%.1f %% of %d)%n", window, count, rate,
                        100 * rate / RATE, RATE));
            }
            System.out.print("RateAccuracyBenchTest\n" + report);
            assertThat(counts).as("whole 60 s windows").isNotEmpty();
            for (int w = 0; w < counts.size(); w++) {
                assertThat(counts.get(w)).as("window %d: mails delivered in 60 s at %d/s", w, RATE)
                        .isBetween((long) Math.floor(RATE * 60 * 0.95), (long) Math.ceil(RATE * 60 * 1.05));
            }
        }
    }
}
