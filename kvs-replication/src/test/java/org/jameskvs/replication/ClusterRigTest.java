package org.jameskvs.replication;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The set-up every real-server replication test shares: a temporary folder for the servers' journals,
 * the cluster the test starts there (its size and tuning are the test's own), closed after each test
 * whatever happened, and the ledger of the puts the test made.
 *
 * @param <C> {@link ProxiedCluster} (in-process servers behind proxies) or {@link ProcessCluster}
 *            (server processes, for kill -9)
 */
abstract class ClusterRigTest<C extends ClusterRig> {
    @TempDir
    Path dir;

    /** Set by the test when it starts its cluster. */
    C cluster;

    final PutLedger ledger = new PutLedger();

    /** {@code queue}'s copy on {@code node}, read directly: every acknowledged put there, once, in order. */
    void assertCopyWhole(String where, String node, String queue) {
        assertWhole(ledger.check(where + ", copy on " + node, queue, cluster.readCopy(node, queue)));
    }

    /** As {@link #assertCopyWhole}, against {@code puts}, which must hold exactly {@code acknowledged} acknowledged puts. */
    void assertCopyHolds(PutLedger puts, String where, String node, String queue, long acknowledged) {
        PutLedger.Check c = puts.check(where + ", copy on " + node, queue, cluster.readCopy(node, queue));
        assertThat(c.acknowledged()).isEqualTo(acknowledged);
        assertWhole(c);
    }

    private static void assertWhole(PutLedger.Check c) {
        assertThat(c.lost()).isZero();
        assertThat(c.duplicated()).isZero();
        assertThat(c.orderBreaks()).isZero();
    }

    @AfterEach
    void closeCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }
}
