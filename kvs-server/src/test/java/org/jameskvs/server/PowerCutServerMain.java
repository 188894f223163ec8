package org.jameskvs.server;

import org.jameskvs.server.storage.FsyncObserver;

import java.nio.file.Path;

/**
 * The KVS server with {@link DurableSnapshots} observing its fsyncs: {@code PowerCutServerMain
 * <config> <snapshot root>}. A test kills it with SIGKILL and restarts a server on the newest
 * snapshot: a power cut.
 */
public final class PowerCutServerMain {
    private PowerCutServerMain() {
    }

    public static void main(String[] args) throws Exception {
        FsyncObserver.install(new DurableSnapshots(Path.of(args[1])));
        KvsServerMain.main(new String[]{args[0]});
    }
}
