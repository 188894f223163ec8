package org.jameskvs.faults;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.protocol.Status;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The writer's load: uniquely identified puts ({@code prefix-N}) pipelined with a bounded window,
 * and every {@code deleteEvery}-th acknowledged message deleted again (as a relayed mail would be).
 * Bounded by a count and a duration. Reports every outcome to a {@link Listener}.
 */
public final class LoadLoop {
    /** Outcomes, called on the queue's callback thread. */
    public interface Listener {
        void onPutIssued(String id);

        void onPutAck(String id, long issuedNanos);

        void onPutFailed(String id, Status status);

        void onDeleteIssued(String id);

        void onDeleteAck(String id);
    }

    public static final int BODY_BYTES = 1024;

    private LoadLoop() {
    }

    /**
     * Runs the load until {@code maxCount} puts were issued, {@code millis} passed or {@code stop}
     * says so, then waits (bounded) for the outstanding answers. @return puts issued
     */
    public static int run(KvsQueue q, String prefix, int maxCount, long millis, int deleteEvery, int window,
                          Listener l, BooleanSupplier stop) throws InterruptedException {
        return run(q, prefix, maxCount, millis, deleteEvery, window, l, stop, () -> false);
    }

    /**
     * The same; while {@code hold} says so no put is issued (the bounds are still checked): a
     * scenario keeps a phase's puts within a budget, so that a fast machine does not spend the whole
     * count before the fault or the heal comes.
     */
    public static int run(KvsQueue q, String prefix, int maxCount, long millis, int deleteEvery, int window,
                          Listener l, BooleanSupplier stop, BooleanSupplier hold) throws InterruptedException {
        Semaphore permits = new Semaphore(window);
        AtomicInteger deletesOut = new AtomicInteger();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        byte[] filler = new byte[BODY_BYTES];
        Arrays.fill(filler, (byte) 'x');
        int i = 0;
        while (i < maxCount && System.nanoTime() < end && !stop.getAsBoolean()) {
            if (hold.getAsBoolean()) {
                Thread.sleep(10);
                continue;
            }
            if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                continue; // a stalled copy: keep checking the bounds
            }
            String id = prefix + "-" + i;
            int n = i++;
            byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
            byte[] body = filler.clone();
            System.arraycopy(idBytes, 0, body, 0, idBytes.length);
            l.onPutIssued(id);
            long issued = System.nanoTime();
            q.put(idBytes, 0, 0, new byte[0], body).whenComplete((Ack a, Throwable t) -> {
                if (a != null && a.isOk()) {
                    l.onPutAck(id, issued);
                    if (deleteEvery > 0 && n % deleteEvery == 0) {
                        // Never block here (this is the queue's callback thread): deletes are counted apart.
                        deletesOut.incrementAndGet();
                        l.onDeleteIssued(id);
                        q.delete(idBytes).whenComplete((d, t2) -> {
                            if (d != null && d.isOk()) {
                                l.onDeleteAck(id);
                            }
                            deletesOut.decrementAndGet();
                        });
                    }
                } else {
                    l.onPutFailed(id, a == null ? Status.INTERNAL_ERROR : a.status());
                }
                permits.release();
            });
        }
        // Drain: every answer in (bounded: request timeouts are seconds).
        if (!permits.tryAcquire(window, 60, TimeUnit.SECONDS)) {
            System.err.println("load " + prefix + ": " + (window - permits.availablePermits())
                    + " requests still unanswered after 60 s");
        } else {
            permits.release(window);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (deletesOut.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return i;
    }
}
