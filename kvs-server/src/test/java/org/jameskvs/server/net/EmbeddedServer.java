package org.jameskvs.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.RollCycles;
import org.jameskvs.server.ServerConfig;
import org.jameskvs.server.metrics.ServerMetrics;
import org.jameskvs.server.storage.JournalTuning;
import org.jameskvs.server.storage.QueueStore;
import org.jameskvs.server.storage.StoreConfig;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A KVS server without sockets and without threads of its own, for deterministic simulation: the
 * real {@link QueueStore} (a Chronicle journal in a folder) and the real connection pipeline
 * (framing, AUTH, {@code RequestDispatcher}, group commit: {@link ServerChannelInitializer}'s
 * handlers) on Netty {@link EmbeddedChannel}s, driven by the caller's thread. A
 * {@link Connection#exchange} hands request bytes in and returns the response bytes they produced,
 * after the group commit that covers them, as the server would put them on the wire.
 *
 * <p>Deterministic: the journal's clock is fixed ({@link SetTimeProvider}, so the same file names
 * and no roll), no page-warming thread, no maintenance (compaction) unless asked. A crash is
 * {@link #close()} (connections gone, the journal closed with everything committed in it, as a
 * kill -9 leaves the page cache) and a new instance on the same folder (replay).
 */
public final class EmbeddedServer implements AutoCloseable {
    /** The credentials of every embedded server (the password passes the server's weak-password check). */
    public static final String USER = "james";
    public static final String PASSWORD = "sim-7f3c9a1e5b2d8460";
    /** Shared: a ServerMetrics binds JVM meters (GC listeners) once per instance; a simulation makes thousands of servers. */
    private static final ServerMetrics METRICS = new ServerMetrics();
    private static final Instant JOURNAL_TIME = Instant.parse("2030-01-01T00:00:00Z");

    private final QueueStore store;
    /** Its event loop runs the group commit task (the server's I/O loop does it after a read). */
    private final EmbeddedChannel commitLoop = new EmbeddedChannel();
    private final ServerContext context;
    private final List<Connection> connections = new ArrayList<>();

    /**
     * Opens (replays) the journal in {@code directory}.
     *
     * @param blockBytes Chronicle block size: small keeps a fresh journal cheap (its largest record is a quarter of it)
     */
    public EmbeddedServer(Path directory, long blockBytes) {
        this(directory, blockBytes, 0);
    }

    /**
     * As above, with {@code journal.maxBytes} ({@code maxJournalBytes}, 0: none): past it PUTs answer
     * DISK_FULL, as a full disk does, and other writes go on into the store's reserve.
     */
    public EmbeddedServer(Path directory, long blockBytes, long maxJournalBytes) {
        this.store = QueueStore.open(storeConfig(directory, blockBytes).withMaxJournalBytes(maxJournalBytes));
        ServerConfig config = ServerConfig.forTest(directory, PASSWORD);
        this.context = new ServerContext(config, store, METRICS,
                new GroupCommitter(commitLoop.eventLoop(), store, METRICS));
    }

    static StoreConfig storeConfig(Path directory, long blockBytes) {
        JournalTuning tuning = JournalTuning.defaults()
                .withRollCycle(RollCycles.FIVE_MINUTELY, new SetTimeProvider(JOURNAL_TIME))
                .withBlockSize(blockBytes)
                .withWarmAhead(0);
        return StoreConfig.defaults(directory).withMinFreeDiskBytes(0).withTuning(tuning);
    }

    public QueueStore store() {
        return store;
    }

    /** A new connection (not yet authenticated: its first request should be AUTH). */
    public Connection connect() {
        Connection c = new Connection();
        connections.add(c);
        return c;
    }

    /** Closes every connection (writer claims released, as when their sockets close), then the journal. */
    @Override
    public void close() {
        for (Connection c : new ArrayList<>(connections)) {
            c.close();
        }
        commitLoop.runPendingTasks();
        commitLoop.finishAndReleaseAll();
        store.close();
    }

    /** One client connection: bytes in, bytes out, synchronously. */
    public final class Connection {
        private final EmbeddedChannel channel = new EmbeddedChannel();

        private Connection() {
            ServerChannelInitializer.addProtocolHandlers(channel.pipeline(), context, null);
        }

        /**
         * Hands {@code requests} (whole or partial frames; released here) to the server and returns
         * what it answered, committed: every response frame in order, in one buffer the caller
         * releases (empty when nothing was answered). After a BAD_FRAME the connection is closed.
         */
        public ByteBuf exchange(ByteBuf requests) {
            if (!channel.isOpen()) {
                requests.release();
                throw new IllegalStateException("connection closed");
            }
            channel.writeInbound(requests);
            commitLoop.runPendingTasks(); // the group commit, then the flush of this connection's answers
            channel.runPendingTasks();
            ByteBuf out = Unpooled.buffer();
            for (Object o; (o = channel.readOutbound()) != null; ) {
                ByteBuf b = (ByteBuf) o;
                out.writeBytes(b);
                b.release();
            }
            return out;
        }

        public boolean isOpen() {
            return channel.isOpen();
        }

        /** The socket closes: the server releases this connection's handles and writer claims. */
        public void close() {
            connections.remove(this);
            channel.close();
            channel.runPendingTasks();
            channel.finishAndReleaseAll();
        }
    }
}
