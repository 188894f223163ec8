package org.jameskvs.faults;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/**
 * {@link ChaosSoak} with process faults on three KVS server processes on 127.0.0.1, the queue first
 * on kvs1+kvs2: kill -9 and restart on the same disk; SIGSTOP then SIGCONT; SIGSTOP, then kill -9 of
 * the frozen process and restart; kill -9 and restart with an empty disk (only with two copies in
 * sync). Network faults in a row: {@link NetworkChaosSoakTest}.
 */
class ChaosSoakTest {
    /** Rounds in CI; the slow variant runs {@link #SLOW_ROUNDS}. */
    static final int ROUNDS = Integer.getInteger("faults.chaosRounds", 10);
    static final int SLOW_ROUNDS = Integer.getInteger("faults.chaosSlowRounds", 80);

    @TempDir
    Path dir;

    @Test
    void faultsInARowLoseNothingAcknowledged() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            ChaosSoak.run("chaos", c, ChaosSoak.PROCESS_FAULTS, ROUNDS);
        }
    }

    @Tag("slow")
    @Test
    void manyFaultsInARowLoseNothingAcknowledged() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            ChaosSoak.run("chaos-long", c, ChaosSoak.PROCESS_FAULTS, SLOW_ROUNDS);
        }
    }
}
