package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

/** Slow start from 1 to the maximum, halving on a connection failure, and waiters let in as the limit allows. */
class AdaptiveLimitTest {

    @Test
    void slowStartThenBackOff() {
        AdaptiveLimit limit = new AdaptiveLimit(1, 4);
        CompletableFuture<Void> first = limit.acquire().toFuture();
        CompletableFuture<Void> second = limit.acquire().toFuture();
        CompletableFuture<Void> third = limit.acquire().toFuture();
        assertThat(first).isDone();
        assertThat(second).as("over the initial limit of 1").isNotDone();

        limit.release(AdaptiveLimit.Feedback.GOT_THROUGH); // limit 2: both waiters may start
        assertThat(limit.current()).isEqualTo(2);
        assertThat(second).isDone();
        assertThat(third).isDone();

        limit.release(AdaptiveLimit.Feedback.GOT_THROUGH);
        limit.release(AdaptiveLimit.Feedback.GOT_THROUGH);
        assertThat(limit.current()).isEqualTo(4);
        limit.acquire().toFuture();
        limit.release(AdaptiveLimit.Feedback.GOT_THROUGH);
        assertThat(limit.current()).as("never above the maximum").isEqualTo(4);

        limit.acquire().toFuture();
        limit.release(AdaptiveLimit.Feedback.CONNECTION_FAILED);
        assertThat(limit.current()).as("a connection failure halves it").isEqualTo(2);
        limit.acquire().toFuture();
        limit.release(AdaptiveLimit.Feedback.CONNECTION_FAILED);
        limit.acquire().toFuture();
        limit.release(AdaptiveLimit.Feedback.CONNECTION_FAILED);
        assertThat(limit.current()).as("at least 1").isEqualTo(1);

        for (int i = 0; i < 3; i++) { // after slow start: about one more per round of `limit` deliveries
            limit.acquire().toFuture();
            limit.release(AdaptiveLimit.Feedback.GOT_THROUGH);
        }
        assertThat(limit.current()).isEqualTo(2);
    }

    @Test
    void aDeliveryThatTriedNoConnectionChangesNothing() {
        AdaptiveLimit limit = new AdaptiveLimit(1, 4);
        limit.acquire().toFuture();
        limit.release(AdaptiveLimit.Feedback.NOTHING);
        assertThat(limit.current()).isEqualTo(1);
    }

    @Test
    void aWaiterStartsWhenADeliveryEnds() {
        AdaptiveLimit limit = new AdaptiveLimit(1, 1);
        limit.acquire().toFuture();
        CompletableFuture<Void> waiter = limit.acquire().toFuture();
        assertThat(waiter).isNotDone();
        limit.release(AdaptiveLimit.Feedback.CONNECTION_FAILED);
        assertThat(waiter).isDone();
    }
}
