package org.jameskvs.replication;

import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wait before a rebuild onto a node whose store refused a write ({@link RecordAndRebuild#storeRefused},
 * {@link RefusingStores}), on a clock the test moves: one wait per node for every queue of the process;
 * 1 s, doubling at each refusal after the wait, capped at 30 s; refusals inside a wait count once; it
 * starts over at 1 s after a PUT the node took, or at a refusal more than 30 s after the last wait ended.
 * {@code FullDiskNodeTest} sees the first waits on real servers; the cap needs minutes of real time
 * there, so it is proven here.
 */
class StoreBackoffTest {
    private static final Pattern WAIT = Pattern.compile("q: b refused a write \\(DISK_FULL\\): no rebuild onto it for (\\d+) ms");
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private long now = 1_000 * SECOND;
    private final List<String> events = new ArrayList<>();
    private final ReplicationCore core = core();
    private final RecordAndRebuild records = new QueueReplica(core, "q", "owner").records;

    private ReplicationCore core() {
        ReplicationConfig config = ReplicationConfig.of(List.of(
                new ReplicationConfig.NodeSpec("a", "h", 1, "h", 1),
                new ReplicationConfig.NodeSpec("b", "h", 2, "h", 2)), "u", "p");
        ReplicationCore c = new ReplicationCore(config, () -> now, request -> { }, 7);
        c.onEvent(events::add);
        return c;
    }

    /**
     * A node keeps every queue in one journal: a refusal seen by queue q keeps queue r's rebuilds off
     * that node too, a refusal r sees inside that wait counts once, and a PUT the node takes for r
     * ends the wait for q. (Per queue, a full node drew each other queue's first rebuild.)
     */
    @Test
    void oneWaitPerNodeForEveryQueueOfTheProcess() {
        RecordAndRebuild other = new QueueReplica(core, "r", "owner").records;
        assertThat(other.otherTargetAvailable()).as("no refusal yet: a or b can take r's copy").isTrue();
        records.storeRefused("a", Status.DISK_FULL);
        records.storeRefused("b", Status.DISK_FULL);
        assertThat(other.otherTargetAvailable()).as("both nodes refused q's writes: none takes r's copy").isFalse();

        int announced = events.size();
        now += SECOND / 2;
        other.storeRefused("b", Status.DISK_FULL);
        assertThat(events).as("r's refusal inside the wait q started counts once").hasSize(announced);

        now += SECOND / 2;
        assertThat(other.otherTargetAvailable()).as("the 1 s wait is over for r too").isTrue();
        assertThat(refuseNow()).as("q's next refusal of b doubles the node's wait").isEqualTo(2_000L);
        assertThat(other.otherTargetAvailable()).as("a's wait is over: a takes r's copy").isTrue();
        other.storeRefused("a", Status.DISK_FULL);
        assertThat(other.otherTargetAvailable()).as("a refused r's write after its wait: both wait again").isFalse();

        other.storeAccepted("b");
        assertThat(records.otherTargetAvailable()).as("b took a PUT of r: q may rebuild onto it again").isTrue();
        assertThat(refuseNow()).as("b's next refusal, seen by q, waits 1 s again").isEqualTo(1_000L);
    }

    @Test
    void theWaitDoublesFromOneSecondAndStopsAtThirtySeconds() {
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            waits.add(refuseAfterTheWait());
        }
        assertThat(waits).containsExactly(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 30_000L, 30_000L, 30_000L);
    }

    @Test
    void refusalsInsideTheWaitCountOnce() {
        assertThat(refuseAfterTheWait()).isEqualTo(1_000L);
        int announced = events.size();
        now += SECOND / 2;
        records.storeRefused("b", Status.DISK_FULL);
        records.storeRefused("b", Status.DISK_FULL);
        assertThat(events).as("no new wait announced inside the first").hasSize(announced);
        now += SECOND / 2;
        assertThat(refuseNow()).as("the first refusal after the wait doubles it").isEqualTo(2_000L);
    }

    @Test
    void aPutTheNodeTookOrALongQuietStartsOverAtOneSecond() {
        for (int i = 0; i < 6; i++) {
            refuseAfterTheWait();
        }
        records.storeAccepted("b");
        assertThat(refuseNow()).as("after a PUT the node took").isEqualTo(1_000L);
        for (int i = 0; i < 3; i++) { // 2, 4, 8 s
            refuseAfterTheWait();
        }
        now += TimeUnit.MILLISECONDS.toNanos(lastWait()) + 29 * SECOND;
        assertThat(refuseNow()).as("29 s after the wait ended: still doubling").isEqualTo(16_000L);
        now += TimeUnit.MILLISECONDS.toNanos(lastWait()) + 31 * SECOND;
        assertThat(refuseNow()).as("31 s after the wait ended: from 1 s again").isEqualTo(1_000L);
    }

    /** Lets any announced wait pass, then refuses once: the wait it announces, in ms. */
    private long refuseAfterTheWait() {
        Long last = lastWait();
        if (last != null) {
            now += TimeUnit.MILLISECONDS.toNanos(last);
        }
        return refuseNow();
    }

    private long refuseNow() {
        int before = events.size();
        records.storeRefused("b", Status.DISK_FULL);
        assertThat(events).as("a refusal after the wait announces a new one").hasSize(before + 1);
        return lastWait();
    }

    private Long lastWait() {
        for (int i = events.size() - 1; i >= 0; i--) {
            Matcher m = WAIT.matcher(events.get(i));
            if (m.matches()) {
                return Long.parseLong(m.group(1));
            }
        }
        return null;
    }
}
