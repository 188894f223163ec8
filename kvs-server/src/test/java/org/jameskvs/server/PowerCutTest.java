package org.jameskvs.server;

import org.jameskvs.testkit.KvsServerProcess;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Power cuts, simulated: the server runs as {@link PowerCutServerMain}, which copies what is durable
 * at every fsync ({@link DurableSnapshots}); under a pipelined load of PUTs the server is killed with
 * SIGKILL at a random moment (after a random number of acknowledged PUTs, with more in flight), and
 * the next server starts on the newest snapshot only: exactly what the disk would hold after the
 * power failed. Then every PUT ever acknowledged must be there, and the load goes on for the next
 * cut. The seed is printed; {@code -Dpowercut.seed=N} replays the choice of moments.
 *
 * <p>{@code fsync.policy=batch} must lose nothing acknowledged over 20 cuts: no acknowledged PUT
 * lost, and no acknowledged DELETE undone (every other cut comes in a load that is mostly DELETEs,
 * a few unanswered at a time, beside PUTs to another queue). Under every policy a loss must be a
 * suffix of what was acknowledged (never a hole before a survivor), and only PUTs acknowledged after
 * the last fsync before the cut began may be lost ({@link DurableSnapshots} notes when each began).
 * The slow test holds {@code interval} to its mechanism: fsyncs come while the PUTs flow, none asked
 * for by a request, no closer together than {@code max(fsync.intervalMillis,
 * maintenance.intervalMillis)}; and {@code none} to having none (its cuts lose all they acknowledged:
 * the cut keeps nothing that was not fsynced). It also prints the loss window: how long before the
 * cut the oldest lost PUT was acknowledged.
 */
class PowerCutTest {
    private static final String PASSWORD = "cut";
    private static final int BODY = 256;
    @TempDir
    Path dir;

    /**
     * One cut: its acknowledged PUTs in answer order, with the time of each answer, the moment of the
     * cut, and the DELETEs sent and those acknowledged.
     */
    private record Cut(List<String> acked, List<Long> ackNanos, long cutNanos, Set<String> deletesSent,
                       Set<String> deletesAcked, long loadStartNanos, long fsyncsAtLoadStart, long killedNanos) {
    }

    /**
     * How an {@code interval} load runs: PUTs paced at {@code perSecond}; it goes on until the
     * harness has seen {@code fsyncs} fsyncs made during it (at most {@code timeoutMillis}), and the
     * cut comes after 1..maxAcked more acknowledged PUTs.
     */
    private record Paced(int perSecond, int fsyncs, long timeoutMillis) {
        static final Paced NONE = new Paced(0, 0, 0);
    }

    /** One request of a load: a PUT of {@code id} into the queue {@code handle}, or a DELETE of it. */
    private record Op(boolean delete, int handle, String id) {
    }

    /**
     * What the cuts of one policy cost: acknowledged-but-lost messages and how old the oldest of them
     * was; the fsyncs made during the loads, and the PUTs acknowledged before the last fsync before
     * their cut began ({@code promised}: each must have survived).
     */
    private record Loss(int cuts, long acked, long lost, long maxLost, long maxWindowMillis, long deletesAcked,
                        long fsyncsDuringLoads, long maxSinceLastFsyncMillis, long promised) {
    }

    @Test
    void batchLosesNothingAcknowledgedOverTwentyPowerCuts() throws Exception {
        Loss loss = cuts("batch", Integer.getInteger("powercut.cuts", 20), 1500, List.of());
        assertThat(loss.lost()).as("acknowledged PUTs lost over %d power cuts", loss.cuts()).isZero();
        assertThat(loss.deletesAcked()).as("acknowledged DELETEs checked after the cuts").isPositive();
    }

    /**
     * The README's {@code interval} and {@code none} rows (slow: {@code -Pslow -Dtest=PowerCutTest}).
     * Asserted, per cut: the loss is a suffix of PUTs acknowledged after the last fsync began (in
     * {@link #cuts}); with {@code interval}, at least two fsyncs came during each load of PUTs alone
     * (the load waits for them, bounded) and never more than one per max(fsync.intervalMillis,
     * maintenance.intervalMillis) of it (a slower machine only makes fewer); with {@code none}, no
     * fsync and everything acknowledged lost. The loss window itself is printed, not asserted (it
     * grows with the machine's delays).
     */
    @Tag("slow")
    @Test
    void lossWindowOfNoneAndInterval() throws Exception {
        int n = Integer.getInteger("powercut.measureCuts", 10);
        Loss none = cuts("none", n, 20_000, List.of(), Paced.NONE, 0);
        // Interval loads: 2,000 PUTs/s, cut at a random moment of the two fsync periods after the second fsync.
        Loss interval = cuts("interval", n, 4_000, List.of(), new Paced(2_000, 2, 60_000), 1_000);
        Loss fastInterval = cuts("interval", n, 400, List.of("maintenance.intervalMillis=100"),
                new Paced(2_000, 2, 60_000), 100);
        System.out.printf("power cut loss, none: %s%npower cut loss, interval (100 ms, maintenance 1 s): %s%n"
                + "power cut loss, interval (100 ms, maintenance 100 ms): %s%n", none, interval, fastInterval);
        assertThat(none.acked()).isPositive();
        assertThat(none.fsyncsDuringLoads()).as("fsyncs with fsync.policy=none").isZero();
        assertThat(none.lost()).as("none: acknowledged PUTs lost (the cut keeps only what was fsynced)")
                .isEqualTo(none.acked());
        for (Loss loss : List.of(interval, fastInterval)) {
            assertThat(loss.acked()).isPositive();
            assertThat(loss.fsyncsDuringLoads()).as("interval fsyncs during the loads").isGreaterThanOrEqualTo(2L * n);
            assertThat(loss.promised()).as("interval: PUTs acknowledged before the last fsync before their cut"
                    + " (so checked to survive)").isPositive();
        }
    }

    /** @param maxAcked a cut comes after a random number of acknowledged PUTs, 1..maxAcked */
    private Loss cuts(String policy, int cuts, int maxAcked, List<String> extraProps) throws Exception {
        return cuts(policy, cuts, maxAcked, extraProps, Paced.NONE, 0);
    }

    /**
     * @param paced      how the loads run (PUTs only): paced, waiting for fsyncs; {@link Paced#NONE}: as fast as answered
     * @param fsyncEvery for {@code interval}: max(fsync.intervalMillis, maintenance.intervalMillis), the least
     *                   time between two fsyncs; 0: not checked
     */
    private Loss cuts(String policy, int cuts, int maxAcked, List<String> extraProps, Paced paced, long fsyncEvery)
            throws Exception {
        long seed = Long.getLong("powercut.seed", System.nanoTime());
        System.out.println("PowerCutTest " + policy + " seed=" + seed + " (replay with -Dpowercut.seed=" + seed + ")");
        Random rnd = new Random(seed);
        Path run = Files.createDirectories(dir.resolve(policy + "-" + System.nanoTime()));
        Path data = Files.createDirectories(run.resolve("data-0"));
        List<String> props = new ArrayList<>(List.of("fsync.policy=" + policy));
        props.addAll(extraProps);
        Set<String> mustSurvive = new HashSet<>();
        // batch: the "done" queue's acknowledged messages not deleted since, and its acknowledged DELETEs
        boolean deletes = policy.equals("batch");
        Set<String> doneMustSurvive = new HashSet<>();
        Set<String> mustBeGone = new HashSet<>();
        Cut previous = null;
        long acked = 0;
        long lost = 0;
        long maxLost = 0;
        long maxWindow = 0;
        long fsyncsDuringLoads = 0;
        long maxSinceLastFsync = 0;
        long promised = 0;
        long lastFsyncNanos = Long.MIN_VALUE; // when the last fsync before the previous cut began
        for (int cut = 0; cut <= cuts; cut++) {
            // What the disk holds before this server starts (it came from the last cut's durable state):
            // the state to come back to when no fsync happens before the next cut.
            Path before = run.resolve("before-" + cut);
            DurableSnapshots.copySparse(data, before);
            Path snapshots = run.resolve("snapshots-" + cut);
            Path next = run.resolve("data-" + (cut + 1));
            try (KvsServerProcess server = KvsServerProcess.in(run.resolve("process-" + cut)).dataDir(data).password(PASSWORD)
                    .properties(props.toArray(new String[0]))
                    .fromClassPath(PowerCutServerMain.class.getName(), snapshots.toString()).start();
                 RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
                int h = c.open("spool", OpenMode.WRITE, 1);
                int done = c.open("done", OpenMode.WRITE, 1);
                if (previous != null) {
                    doneMustSurvive.removeAll(previous.deletesSent()); // sent, not acknowledged: either way
                    mustBeGone.addAll(previous.deletesAcked());
                }
                Set<String> doneNow = readIds(c, done);
                Set<String> resurrected = new HashSet<>(mustBeGone);
                resurrected.retainAll(doneNow);
                assertThat(resurrected).as("messages whose DELETE was acknowledged, back after cut %d (%s)", cut, policy)
                        .isEmpty();
                assertThat(doneNow).as("messages never deleted, missing after cut %d (%s)", cut, policy)
                        .containsAll(doneMustSurvive);
                Set<String> present = readIds(c, h);
                Set<String> missing = new HashSet<>(mustSurvive);
                missing.removeAll(present);
                assertThat(missing).as("PUTs that had survived earlier cuts, missing after cut %d (%s)", cut, policy)
                        .isEmpty();
                if (previous != null) {
                    int lostHere = 0;
                    long window = 0;
                    boolean gone = false;
                    for (int i = 0; i < previous.acked().size(); i++) {
                        String id = previous.acked().get(i);
                        if (present.contains(id)) {
                            assertThat(gone).as("cut %d (%s): %s survived though an earlier acknowledged PUT was lost",
                                    cut, policy, id).isFalse();
                            mustSurvive.add(id);
                        } else {
                            if (!gone) {
                                window = (previous.cutNanos() - previous.ackNanos().get(i)) / 1_000_000;
                                assertThat(previous.ackNanos().get(i)).as("cut %d (%s): %s lost, though acknowledged"
                                        + " before the last fsync began", cut, policy, id).isGreaterThan(lastFsyncNanos);
                            }
                            gone = true;
                            lostHere++;
                        }
                    }
                    if (policy.equals("batch")) {
                        assertThat(lostHere).as("acknowledged PUTs lost at power cut %d (%s)", cut, policy).isZero();
                    }
                    lost += lostHere;
                    maxLost = Math.max(maxLost, lostHere);
                    maxWindow = Math.max(maxWindow, window);
                    System.out.printf("power cut %d (%s): %d acknowledged, %d lost (the oldest lost was acknowledged"
                                    + " %d ms before the cut)%n", cut, policy, previous.acked().size(), lostHere, window);
                }
                if (cut == cuts) {
                    break;
                }
                String prefix = "c" + cut + "-";
                if (deletes && cut % 2 == 1) {
                    // Mostly DELETEs and a PUT every fourth request, at most 4 unanswered.
                    List<String> toDelete = putAll(c, done, "d" + prefix, 200);
                    doneMustSurvive.addAll(toDelete);
                    previous = loadUntilCut(server, c, mostlyDeletes(done, toDelete, h, prefix), 4, 1 + rnd.nextInt(150),
                            snapshots, Paced.NONE);
                } else {
                    previous = loadUntilCut(server, c, i -> new Op(false, h, prefix + i), 64, 1 + rnd.nextInt(maxAcked),
                            snapshots, paced);
                }
                acked += previous.acked().size();
            }
            var newest = DurableSnapshots.newest(snapshots);
            long fsyncs = DurableSnapshots.fsyncs(snapshots);
            long duringLoad = fsyncs - previous.fsyncsAtLoadStart();
            fsyncsDuringLoads += duringLoad;
            lastFsyncNanos = Long.MIN_VALUE;
            if (fsyncs > 0) {
                lastFsyncNanos = DurableSnapshots.fsyncNanos(snapshots, fsyncs).orElseThrow();
                assertThat(lastFsyncNanos).as("cut %d (%s): the last fsync began before the server was killed"
                        + " (System.nanoTime is one clock for both processes)", cut + 1, policy)
                        .isLessThan(previous.killedNanos());
            }
            if (duringLoad >= 2) { // the first counted may have begun just before the load (see loadUntilCut)
                assertThat(lastFsyncNanos).as("cut %d (%s): the last fsync, the second or later during the load,"
                        + " began after it started", cut + 1, policy).isGreaterThan(previous.loadStartNanos());
            }
            for (long t : previous.ackNanos()) {
                promised += t < lastFsyncNanos ? 1 : 0;
            }
            if (duringLoad > 0) {
                maxSinceLastFsync = Math.max(maxSinceLastFsync, (previous.cutNanos() - lastFsyncNanos) / 1_000_000);
            }
            if (fsyncEvery > 0) {
                // Two fsyncs are at least fsyncEvery apart (the maintenance pass's fixed delay, and the
                // interval since the last fsync ended; less 1 ms for the store's whole-millisecond clock),
                // and all but the first fsync counted began after the load started: a slow machine only
                // makes fewer.
                long loadMillis = (previous.killedNanos() - previous.loadStartNanos()) / 1_000_000;
                assertThat(duringLoad).as("cut %d (%s): fsyncs during %d ms of load: none closer than %d ms",
                        cut + 1, policy, loadMillis, fsyncEvery).isLessThanOrEqualTo(loadMillis / (fsyncEvery - 1) + 2);
            }
            System.out.printf("power cut %d (%s): %d fsyncs before it, %d during its load%s%n", cut + 1, policy,
                    fsyncs, duringLoad, duringLoad > 0 ? String.format(" (the last began %d ms before the cut)",
                            (previous.cutNanos() - lastFsyncNanos) / 1_000_000) : "");
            Files.move(newest.isPresent() ? newest.get() : before, next);
            for (Path gone : new Path[]{data, before, snapshots}) {
                if (Files.exists(gone)) {
                    DurableSnapshots.deleteTree(gone);
                }
            }
            data = next;
        }
        Loss loss = new Loss(cuts, acked, lost, maxLost, maxWindow, mustBeGone.size(), fsyncsDuringLoads,
                maxSinceLastFsync, promised);
        System.out.println("power cuts (" + policy + " " + extraProps + "): " + loss);
        return loss;
    }

    /**
     * Pipelines the requests {@code ops.apply(0), ops.apply(1), ...} (at most {@code window}
     * unanswered; at {@code paced.perSecond()} when given) from one thread while this one reads the
     * answers; after {@code cutAfter} OKs (counted once the harness has seen {@code paced.fsyncs()}
     * fsyncs made during the load, when asked) the server is killed with SIGKILL, its snapshotter
     * included: the power cut. @return what was acknowledged before it
     */
    private static Cut loadUntilCut(KvsServerProcess server, RawClient c, IntFunction<Op> ops, int window,
                                    int cutAfter, Path snapshots, Paced paced) throws Exception {
        long loadStart = System.nanoTime();
        long fsyncsAtStart = DurableSnapshots.fsyncs(snapshots); // polled after loadStart: the next fsync ends after both
        Semaphore room = new Semaphore(window);
        ConcurrentLinkedQueue<Op> sent = new ConcurrentLinkedQueue<>();
        Set<String> deletesSent = ConcurrentHashMap.newKeySet();
        Thread sender = new Thread(() -> {
            try {
                for (int i = 0; i < 1_000_000; i++) {
                    if (paced.perSecond() > 0) {
                        long wait = loadStart + i * 1_000_000_000L / paced.perSecond() - System.nanoTime();
                        if (wait > 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(wait); // pacing, not waiting for an event
                        }
                    }
                    room.acquire();
                    Op op = ops.apply(i);
                    ByteBuf b = Unpooled.buffer();
                    byte[] id = op.id().getBytes(StandardCharsets.UTF_8);
                    if (op.delete()) {
                        deletesSent.add(op.id());
                        Requests.delete(b, i, op.handle(), id);
                    } else {
                        byte[] body = new byte[BODY];
                        java.util.Arrays.fill(body, (byte) ('a' + i % 26));
                        Requests.put(b, i, op.handle(), id, 0, 0, new byte[0], body);
                    }
                    sent.add(op);
                    c.sendRaw(ByteBufUtil.getBytes(b));
                }
            } catch (InterruptedException | IOException e) {
                // the cut
            }
        }, "power-cut-load");
        sender.setDaemon(true);
        sender.start();
        List<String> acked = new ArrayList<>();
        List<Long> ackNanos = new ArrayList<>();
        Set<String> deletesAcked = new HashSet<>();
        long cutNanos;
        long killedNanos;
        try {
            // Until the fsyncs asked for have been seen: no cut yet.
            int until = paced.fsyncs() > 0 ? Integer.MAX_VALUE : cutAfter;
            long deadline = loadStart + paced.timeoutMillis() * 1_000_000L;
            for (int oks = 0; oks < until; ) {
                if (until == Integer.MAX_VALUE) {
                    long seen = DurableSnapshots.fsyncs(snapshots) - fsyncsAtStart;
                    if (seen >= paced.fsyncs()) {
                        until = oks + cutAfter;
                    } else if (System.nanoTime() - deadline > 0) {
                        fail("%d of %d fsyncs seen during %d ms of PUTs", seen, paced.fsyncs(), paced.timeoutMillis());
                    }
                }
                RawClient.Response r = c.receive();
                Op op = sent.poll();
                room.release();
                if (r.status() == Status.OK) {
                    oks++;
                    if (op.delete()) {
                        deletesAcked.add(op.id());
                    } else {
                        acked.add(op.id());
                        ackNanos.add(System.nanoTime());
                    }
                }
            }
        } finally {
            cutNanos = System.nanoTime();
            server.kill9();
            killedNanos = System.nanoTime();
            sender.interrupt();
        }
        sender.join(10_000);
        return new Cut(acked, ackNanos, cutNanos, new HashSet<>(deletesSent), deletesAcked, loadStart, fsyncsAtStart,
                killedNanos);
    }

    /**
     * Request {@code i} of a load that deletes {@code toDelete} from the queue {@code done}, three
     * DELETEs then a PUT of {@code prefix + i} into the queue {@code h}; only PUTs once all are deleted.
     */
    private static IntFunction<Op> mostlyDeletes(int done, List<String> toDelete, int h, String prefix) {
        return i -> {
            int next = i / 4 * 3 + i % 4; // the DELETEs before request i, when it is one of them
            return i % 4 == 3 || next >= toDelete.size() ? new Op(false, h, prefix + i) : new Op(true, done, toDelete.get(next));
        };
    }

    /** PUTs {@code n} messages ({@code prefix0, ...}) one at a time, each acknowledged. @return their ids */
    private static List<String> putAll(RawClient c, int h, String prefix, int n) throws IOException {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            assertThat(c.put(h, prefix + i, "body").status()).isEqualTo(Status.OK);
            ids.add(prefix + i);
        }
        return ids;
    }

    private static Set<String> readIds(RawClient c, int h) throws IOException {
        Set<String> ids = new HashSet<>();
        c.readAll(h, 10_000, 16 << 20, m -> ids.add(new String(m.id(), StandardCharsets.UTF_8)));
        return ids;
    }
}
