package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A simulated deployment: KVS nodes and James writers, each writer a {@link ReplicationCore} ticking on virtual time. */
final class SimCluster {
    static final long MS = 1_000_000L;
    final SimWorld world;
    final ReplicationConfig config;
    final List<Writer> writers = new ArrayList<>();
    final List<String> log = new ArrayList<>();
    /** Every core ever started, including those of restarted (zombie) processes that still get answers. */
    final List<ReplicationCore> allCores = new ArrayList<>();
    boolean verbose;

    final class Writer {
        final String owner;
        String client;
        ReplicationCore core;
        int incarnation;
        QueueReplica replica;
        boolean opening;
        long openedAt = -1;

        Writer(String owner) {
            this.owner = owner;
            boot();
        }

        /** Starts (or restarts, losing all memory) the James process. */
        void boot() {
            incarnation++;
            client = owner + "#" + incarnation;
            ReplicationCore c = new ReplicationCore(config, world.clock(), world.transport(client), world.rnd.nextInt(1 << 20));
            String who = client;
            c.onEvent(e -> {
                String line = String.format("%8.3f %s %s", world.now / 1e9, who, e);
                log.add(line);
                if (verbose) {
                    System.out.println(line);
                }
            });
            world.attach(client, c);
            allCores.add(c);
            core = c;
            replica = null;
            opening = false;
            int inc = incarnation;
            tickLoop(c, inc);
        }

        private void tickLoop(ReplicationCore c, int inc) {
            world.after(config.tick().toNanos(), () -> {
                if (incarnation == inc) {
                    c.tick();
                    tickLoop(c, inc);
                }
            });
        }

        /** Open (reclaim when the queue is ours) or take over; the future completes on the world's thread. */
        CompletableFuture<OpenResult> open(String queue, boolean force) {
            opening = true;
            ReplicationCore c = core;
            CompletableFuture<OpenResult> f = force ? c.takeOver(queue, OpenOptions.writer(owner, 0))
                    : c.open(queue, OpenOptions.writer(owner, 0));
            return f.whenComplete((r, t) -> {
                if (c != core) {
                    return;
                }
                opening = false;
                if (r != null && r.isOk()) {
                    replica = c.replica(queue);
                    openedAt = world.now;
                }
            });
        }

        boolean ready() {
            return replica != null && !replica.isFenced() && replica.phase == QueueReplica.Phase.READY;
        }
    }

    /** On model servers ({@link SimServer}). */
    SimCluster(long seed, int nodes, int writerCount) {
        this(seed, nodes, writerCount, SimServer::new);
    }

    /** @param nodeFactory each node's server: {@code SimServer::new} (the model) or a {@link RealNode} maker */
    SimCluster(long seed, int nodes, int writerCount, java.util.function.Function<String, SimNode> nodeFactory) {
        this(seed, nodes, writerCount, nodeFactory, c -> c);
    }

    /** @param tune adjusts the configuration the writers use */
    SimCluster(long seed, int nodes, int writerCount, java.util.function.Function<String, SimNode> nodeFactory,
               java.util.function.UnaryOperator<ReplicationConfig> tune) {
        List<String> names = new ArrayList<>();
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            names.add("kvs" + i);
            specs.add(new ReplicationConfig.NodeSpec("kvs" + i, "sim", i, "sim", 100 + i));
        }
        world = new SimWorld(seed, names, nodeFactory);
        config = tune.apply(ReplicationConfig.of(specs, "u", "p").withCopyBlock(7, 1 << 20));
        for (int i = 1; i <= writerCount; i++) {
            writers.add(new Writer("james" + i));
        }
    }

    void run(long millis) {
        world.runUntil(world.now + millis * MS);
    }

    /** Runs until the future completes (or the virtual deadline passes). */
    <T> T await(CompletableFuture<T> f, long maxMillis) {
        long end = world.now + maxMillis * MS;
        while (!f.isDone() && world.now < end) {
            world.runUntil(world.now + MS);
        }
        if (!f.isDone()) {
            throw new AssertionError("not done after " + maxMillis + " ms (virtual)\n" + tail());
        }
        return f.join();
    }

    Ack put(Writer w, String id, String body) {
        return await(w.core.put(w.replica, id.getBytes(), 0, 0, new byte[0], body.getBytes()), 30_000);
    }

    String tail() {
        int from = Math.max(0, log.size() - 60);
        return String.join("\n", log.subList(from, log.size()));
    }

    static Duration ms(long m) {
        return Duration.ofMillis(m);
    }

    static boolean ok(Ack a) {
        return a.status() == Status.OK;
    }
}
