package org.jameskvs.server.net;

import org.jameskvs.protocol.OpenMode;
import org.jameskvs.server.metrics.ServerMetrics;
import org.jameskvs.server.storage.QueueState;

/**
 * What a connection holds after OPEN: the queue, how it was opened, the epoch it was opened with, and
 * the queue's request tally (kvs_queue_requests_total).
 */
record QueueHandle(QueueState queue, OpenMode mode, long epoch, ServerMetrics.QueueTally tally) {
}
