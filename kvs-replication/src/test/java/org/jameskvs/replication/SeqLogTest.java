package org.jameskvs.replication;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writer's catch-up log ({@link SeqLog}): what it answers, its bound, and what it costs. Memory
 * is what matters (a James holds about 1,000 lane queues): two copies in sync keep no log at all; a
 * copy away makes one that grows with the mutations since (8 bytes per plain PUT, the id and state
 * only for what must be replayed), is given up at {@code catchUpLogEntries}, and is freed when the
 * copy is caught up (on real servers, {@link RealNode}, in the simulation).
 */
class SeqLogTest extends RealNodeSimulation {
    private static final String Q = "seqlog.example.net";

    private static SeqLog.Change delete(long seq, String id) {
        return new SeqLog.Change(seq, NodeOp.DELETE, id.getBytes(StandardCharsets.UTF_8), 0, 0, null);
    }

    @Test
    void answersTheDigestAtEachSeqItHolds() {
        SeqLog log = new SeqLog("kvs2", null, 10, 0xAAL, 100);
        assertThat(log.append(0xB1L, null)).isTrue(); // seq 11, a PUT
        assertThat(log.append(0xB2L, delete(12, "m1"))).isTrue();
        assertThat(log.append(0xB3L, null)).isTrue();
        assertThat(log.lastSeq()).isEqualTo(13);
        assertThat(log.lastDigest()).isEqualTo(0xB3L);
        assertThat(log.matches(10, 0xAAL)).as("the base").isTrue();
        assertThat(log.matches(12, 0xB2L)).isTrue();
        assertThat(log.matches(12, 0xB3L)).as("another digest at that seq").isFalse();
        assertThat(log.matches(9, 0xAAL)).as("below the base: not held").isFalse();
        assertThat(log.matches(14, 0xB3L)).as("above the end: not held").isFalse();
        assertThat(log.changesAfter(11, 13)).extracting(SeqLog.Change::seq).containsExactly(12L);
        assertThat(log.changesAfter(12, 13)).isEmpty();
    }

    @Test
    void growsOnDemandAndRefusesBeyondItsBound() {
        SeqLog log = new SeqLog("kvs2", null, 0, 0, 1000);
        assertThat(log.capacity()).as("nothing allocated before the first entry").isZero();
        for (int i = 0; i < 10; i++) {
            assertThat(log.append(i, null)).isTrue();
        }
        assertThat(log.capacity()).as("a small start").isLessThanOrEqualTo(64);
        for (int i = 10; i < 1000; i++) {
            assertThat(log.append(i, null)).isTrue();
        }
        assertThat(log.capacity()).isEqualTo(1000);
        assertThat(log.append(1000, null)).as("one more than the bound: give the log up").isFalse();
    }

    @Test
    void noLogWhileInSyncOneWhileACopyIsAwayNoneOnceItIsCaughtUp() {
        SimCluster c = new SimCluster(41, 2, 1, pool.forQueue(Q));
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        for (int i = 0; i < 200; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        c.run(3000);
        assertThat(w.replica.seqLog).as("two copies in sync keep no log").isNull();

        c.world.cut("kvs2", null, true);
        c.run(5000);
        assertThat(w.replica.syncNodes()).as(c.tail()).containsExactly("kvs1");
        SeqLog log = w.replica.seqLog;
        assertThat(log).as("kvs2 is away: a log is kept\n" + c.tail()).isNotNull();
        assertThat(log.capacity()).as("what it holds: the record writes since, not 8,192 entries").isLessThanOrEqualTo(64);

        c.world.cut("kvs2", null, false);
        c.run(5000);
        assertThat(c.log).as(c.tail()).anyMatch(e -> e.contains("rebuild of kvs2 done: caught up by the suffix"));
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(w.replica.seqLog).as("caught up: the log is freed").isNull();
        SimNode.QueueView q1 = c.world.servers.get("kvs1").view(Q);
        SimNode.QueueView q2 = c.world.servers.get("kvs2").view(Q);
        assertThat(List.of(q2.seq(), q2.digest())).as("both copies at the same seq and digest").isEqualTo(List.of(q1.seq(), q1.digest()));
    }

    @Test
    void aLogBeyondItsBoundIsGivenUpAndTheCopyRebuiltInFull() {
        SimCluster c = new SimCluster(42, 2, 1, pool.forQueue(Q), cfg -> cfg.withCatchUpLogEntries(2));
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        for (int i = 0; i < 20; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        c.world.cut("kvs2", null, true);
        c.run(15_000); // lease renewals write the record: more than 2 mutations on kvs1 alone
        assertThat(w.replica.seqLog).as(c.tail()).isNull();
        assertThat(c.log).anyMatch(e -> e.contains("catch-up log for kvs2 given up"));
        c.world.cut("kvs2", null, false);
        c.run(5000);
        assertThat(c.log).as(c.tail()).anyMatch(e -> e.contains("rebuild of kvs2 done: ") && !e.contains("caught up"));
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
    }
}
