package org.jameskvs.james.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;

import org.jameskvs.replication.Lease;
import org.junit.jupiter.api.Test;

/** The lease rule a survivor applies to a peer: expired = unchanged for the timeout of its own clock. */
class PeerLeaseTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aLeaseExpiresOnlyAfterTheTimeoutWithoutRenewal() {
        PeerLease lease = new PeerLease(Duration.ofSeconds(10));
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 1)), 0)).as("first look").isFalse();
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 1)), 9 * SECOND)).isFalse();
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 2)), 9 * SECOND + 1)).as("renewed").isFalse();
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 2)), 18 * SECOND)).as("9 s after the renewal").isFalse();
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 2)), 19 * SECOND + 1)).as("10 s after it").isTrue();
        assertThat(lease.unrenewedFor(19 * SECOND + 1)).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aLookThatSawNoRecordNeitherRenewsNorExpires() {
        PeerLease lease = new PeerLease(Duration.ofSeconds(10));
        assertThat(lease.observe(Optional.empty(), 0)).isFalse();
        assertThat(lease.observe(Optional.empty(), 100 * SECOND)).as("never seen: never expired").isFalse();
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 1)), 100 * SECOND)).isFalse();
        assertThat(lease.observe(Optional.empty(), 200 * SECOND)).as("unreadable: says nothing").isFalse();
        assertThat(lease.observe(Optional.of(new Lease("a", 7, 1)), 200 * SECOND)).as("then seen unchanged").isTrue();
    }

    @Test
    void aNewEpochIsARenewal() {
        PeerLease lease = new PeerLease(Duration.ofSeconds(10));
        lease.observe(Optional.of(new Lease("a", 7, 5)), 0);
        assertThat(lease.observe(Optional.of(new Lease("adopted-by:b", 8, 1)), 20 * SECOND)).isFalse();
    }

    @Test
    void levelQueueNamesAreParsedAndOthersRefused() {
        assertThat(LevelQueueName.parse("mx-1/queue/outgoing@p5"))
            .contains(new LevelQueueName("mx-1", "outgoing", 5));
        assertThat(LevelQueueName.parse("mx-1/queue/outgoing@p5").orElseThrow().kvsName()).isEqualTo("mx-1/queue/outgoing@p5");
        assertThat(LevelQueueName.parse("mx-1/repo/var/mail/error")).isEmpty();
        assertThat(LevelQueueName.parse("mx-1/queue/outgoing@p12")).isEmpty();
        assertThat(LevelQueueName.parse("/queue/outgoing@p5")).isEmpty();
    }
}
