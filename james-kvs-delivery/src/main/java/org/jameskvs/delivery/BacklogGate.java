package org.jameskvs.delivery;

import java.util.function.LongSupplier;

/**
 * One lane's receipt regulation with hysteresis: closed (new mail refused) once its queue reaches the
 * high-water mark, open again once it is down to the low-water mark. The queue size (a KVS STAT) is read
 * at most once per {@code refreshMillis}, so a busy SMTP server does not ask the KVS on every RCPT.
 */
final class BacklogGate {
    private final LaneDeliveryConfig.WaterMarks marks;
    private final LongSupplier queueSize;
    private final LongSupplier clockMillis;
    private final long refreshMillis;
    private long size;
    private long readAt = Long.MIN_VALUE;
    private boolean closed;

    BacklogGate(LaneDeliveryConfig.WaterMarks marks, LongSupplier queueSize, LongSupplier clockMillis, long refreshMillis) {
        this.marks = marks;
        this.queueSize = queueSize;
        this.clockMillis = clockMillis;
        this.refreshMillis = refreshMillis;
    }

    /** True when new mail for this lane must be refused now. */
    synchronized boolean refuses() {
        long now = clockMillis.getAsLong();
        if (readAt == Long.MIN_VALUE || now - readAt >= refreshMillis) {
            long read = queueSize.getAsLong();
            readAt = now;
            if (read >= 0) { // -1: the size could not be read; keep the last decision
                size = read;
                closed = closed ? size > marks.low() : size >= marks.high();
            }
        }
        return closed;
    }

    synchronized long lastSize() {
        return size;
    }
}
