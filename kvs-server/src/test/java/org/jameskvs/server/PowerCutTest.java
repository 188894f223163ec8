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
 * a few unanswered at a time, beside PUTs to another queue). With {@code none} and
 * {@code interval} (slow test) the loss window is measured: what was acknowledged but lost, and how
 * long before the cut it was acknowledged; the loss must be a suffix of what was acknowledged (never
 * a hole before a survivor).
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
                       Set<String> deletesAcked) {
    }

    /** One request of a load: a PUT of {@code id} into the queue {@code handle}, or a DELETE of it. */
    private record Op(boolean delete, int handle, String id) {
    }

    /** What the cuts of one policy cost: acknowledged-but-lost messages and how old the oldest of them was. */
    private record Loss(int cuts, long acked, long lost, long maxLost, long maxWindowMillis, long deletesAcked) {
    }

    @Test
    void batchLosesNothingAcknowledgedOverTwentyPowerCuts() throws Exception {
        Loss loss = cuts("batch", Integer.getInteger("powercut.cuts", 20), 1500, List.of());
        assertThat(loss.lost()).as("acknowledged PUTs lost over %d power cuts", loss.cuts()).isZero();
        assertThat(loss.deletesAcked()).as("acknowledged DELETEs checked after the cuts").isPositive();
    }

    /** Figures for the README's durability table (slow: {@code -Pslow -Dtest=PowerCutTest}). */
    @Tag("slow")
    @Test
    void lossWindowOfNoneAndInterval() throws Exception {
        int n = Integer.getInteger("powercut.measureCuts", 10);
        // Cuts after up to 20,000 acknowledged PUTs (a few seconds of load), so that interval fsyncs happen.
        Loss none = cuts("none", n, 20_000, List.of());
        Loss interval = cuts("interval", n, 20_000, List.of());
        Loss fastInterval = cuts("interval", n, 20_000, List.of("maintenance.intervalMillis=100"));
        System.out.printf("power cut loss, none: %s%npower cut loss, interval (100 ms, maintenance 1 s): %s%n"
                + "power cut loss, interval (100 ms, maintenance 100 ms): %s%n", none, interval, fastInterval);
        assertThat(none.acked()).isPositive();
    }

    /** @param maxAcked a cut comes after a random number of acknowledged PUTs, 1..maxAcked */
    private Loss cuts(String policy, int cuts, int maxAcked, List<String> extraProps) throws Exception {
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
                    previous = loadUntilCut(server, c, mostlyDeletes(done, toDelete, h, prefix), 4, 1 + rnd.nextInt(150));
                } else {
                    previous = loadUntilCut(server, c, i -> new Op(false, h, prefix + i), 64, 1 + rnd.nextInt(maxAcked));
                }
                acked += previous.acked().size();
            }
            var newest = DurableSnapshots.newest(snapshots);
            System.out.printf("power cut %d (%s): %d fsyncs before it%n", cut + 1, policy,
                    DurableSnapshots.fsyncs(snapshots));
            Files.move(newest.isPresent() ? newest.get() : before, next);
            for (Path gone : new Path[]{data, before, snapshots}) {
                if (Files.exists(gone)) {
                    DurableSnapshots.deleteTree(gone);
                }
            }
            data = next;
        }
        Loss loss = new Loss(cuts, acked, lost, maxLost, maxWindow, mustBeGone.size());
        System.out.println("power cuts (" + policy + " " + extraProps + "): " + loss);
        return loss;
    }

    /**
     * Pipelines the requests {@code ops.apply(0), ops.apply(1), ...} (at most {@code window}
     * unanswered) from one thread while this one reads the answers; after {@code cutAfter} OKs the
     * server is killed with SIGKILL, its snapshotter included: the power cut. @return what was
     * acknowledged before it
     */
    private static Cut loadUntilCut(KvsServerProcess server, RawClient c, IntFunction<Op> ops, int window,
                                    int cutAfter) throws Exception {
        Semaphore room = new Semaphore(window);
        ConcurrentLinkedQueue<Op> sent = new ConcurrentLinkedQueue<>();
        Set<String> deletesSent = ConcurrentHashMap.newKeySet();
        Thread sender = new Thread(() -> {
            try {
                for (int i = 0; i < 1_000_000; i++) {
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
        try {
            for (int oks = 0; oks < cutAfter; ) {
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
            sender.interrupt();
        }
        sender.join(10_000);
        return new Cut(acked, ackNanos, cutNanos, new HashSet<>(deletesSent), deletesAcked);
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
