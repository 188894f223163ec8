package org.jameskvs.replication;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The set-up of the simulations that run on real servers: a pool of real nodes ({@link RealNode})
 * in a fresh folder per test, reused across the seeds of the test, closed after it.
 */
abstract class RealNodeSimulation {
    @TempDir
    Path folders;
    /** The simulated clusters run the real servers. */
    RealNode.Pool pool;

    @BeforeEach
    void startServers() {
        pool = new RealNode.Pool(folders);
    }

    @AfterEach
    void closeServers() {
        pool.close();
    }
}
