package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

class RatePacerTest {

    @Test
    void slotsAreOneIntervalApartAndUnusedTimeIsNotSaved() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        RatePacer pacer = new RatePacer(10, now::get);
        assertThat(pacer.reserve()).isZero();
        assertThat(pacer.reserve()).isEqualTo(Duration.ofMillis(100));
        assertThat(pacer.reserve()).isEqualTo(Duration.ofMillis(200));
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertThat(pacer.reserve()).as("no burst after a quiet time").isZero();
        assertThat(pacer.reserve()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void zeroMeansNoLimit() {
        RatePacer pacer = new RatePacer(0, System::nanoTime);
        for (int i = 0; i < 100; i++) {
            assertThat(pacer.reserve()).isZero();
        }
    }

    /** 20 mails at 20/s: the last cannot arrive before 19 intervals (950 ms) after the first was queued. */
    @Test
    void aLaneSendsNoFasterThanItsRate() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("paced.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", "paced.test", "buckets", "1",
                "concurrency", "4", "maxMessageRate", "20", "port", String.valueOf(target.port()));
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, new LaneRegistry())) {
                long queuedAt = System.currentTimeMillis();
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("m" + i, TestMails.messageId("paced", i), "r" + i + "@paced.test"));
                }
                await(() -> target.domain("paced.test").accepted() == 20, "20 mails delivered");
                long lastArrival = Collections.max(target.domain("paced.test").arrivals().values());
                assertThat(lastArrival - queuedAt).isGreaterThanOrEqualTo(950);
            }
        }
    }
}
