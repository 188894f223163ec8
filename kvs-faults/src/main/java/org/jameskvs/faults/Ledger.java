package org.jameskvs.faults;

import org.jameskvs.protocol.Status;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a writer was told: every put it issued, which were acknowledged (OK = two copies), which
 * were deleted (delete acknowledged) and which deletes were sent with an unknown outcome. Also the
 * switchover measurement: the time from a fault ({@link #markFault}) to the first acknowledged put
 * issued after it; and how many puts issued after the fault, and after the heal ({@link #markHeal}),
 * were acknowledged: the events a scenario waits for instead of fixed times. Thread-safe.
 */
public final class Ledger implements LoadLoop.Listener {
    public final Set<String> attempted = ConcurrentHashMap.newKeySet();
    public final Set<String> acked = ConcurrentHashMap.newKeySet();
    public final Set<String> deleteAttempted = ConcurrentHashMap.newKeySet();
    public final Set<String> deleted = ConcurrentHashMap.newKeySet();
    public final Map<Status, AtomicLong> failures = new ConcurrentHashMap<>();
    private final AtomicLong faultAt = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong firstAckAfterFault = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong firstFailureAt = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong healAt = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong ackedAfterFault = new AtomicLong();
    private final AtomicLong ackedAfterHeal = new AtomicLong();
    /** Puts issued since the last phase began (the load's start, the fault, the heal). */
    private final AtomicLong issuedInPhase = new AtomicLong();

    /** Marks the moment a fault was injected (System.nanoTime of this machine). */
    public void markFault() {
        markFault(System.nanoTime());
    }

    public void markFault(long nanoTime) {
        if (faultAt.compareAndSet(Long.MAX_VALUE, nanoTime)) {
            issuedInPhase.set(0);
        }
    }

    /** Marks the moment a fault was healed. */
    public void markHeal() {
        if (healAt.compareAndSet(Long.MAX_VALUE, System.nanoTime())) {
            issuedInPhase.set(0);
        }
    }

    /** Puts issued since the last phase began: the load's start, the fault, the heal. */
    public long issuedInPhase() {
        return issuedInPhase.get();
    }

    /** Acknowledged puts that were issued after the fault was marked. */
    public long ackedAfterFault() {
        return ackedAfterFault.get();
    }

    /** Acknowledged puts that were issued after the heal was marked. */
    public long ackedAfterHeal() {
        return ackedAfterHeal.get();
    }

    public long faultNanos() {
        return faultAt.get();
    }

    public boolean faultMarked() {
        return faultAt.get() != Long.MAX_VALUE;
    }

    public long firstFailureNanos() {
        return firstFailureAt.get();
    }

    @Override
    public void onPutIssued(String id) {
        attempted.add(id);
        issuedInPhase.incrementAndGet();
    }

    @Override
    public void onPutAck(String id, long issuedNanos) {
        acked.add(id);
        if (issuedNanos >= faultAt.get()) {
            firstAckAfterFault.accumulateAndGet(System.nanoTime(), Math::min);
            ackedAfterFault.incrementAndGet();
        }
        if (issuedNanos >= healAt.get()) {
            ackedAfterHeal.incrementAndGet();
        }
    }

    @Override
    public void onPutFailed(String id, Status status) {
        failures.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
        firstFailureAt.accumulateAndGet(System.nanoTime(), Math::min);
    }

    @Override
    public void onDeleteIssued(String id) {
        deleteAttempted.add(id);
    }

    @Override
    public void onDeleteAck(String id) {
        deleted.add(id);
    }

    /** Milliseconds from the fault to the first acknowledged put issued after it; -1 if none (or no fault). */
    public long switchoverMillis() {
        long f = faultAt.get();
        long a = firstAckAfterFault.get();
        return f == Long.MAX_VALUE || a == Long.MAX_VALUE ? -1 : (a - f) / 1_000_000;
    }

    public long failureCount() {
        return failures.values().stream().mapToLong(AtomicLong::get).sum();
    }

    @Override
    public String toString() {
        return "attempted=" + attempted.size() + " acked=" + acked.size() + " deleted=" + deleted.size()
                + " deleteUnknown=" + (deleteAttempted.size() - deleted.size()) + " failures=" + failures;
    }
}
