package org.jameskvs.james.cluster;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One namespace this node adopted, as the admin routes show it.
 *
 * @param state     CLAIMING, MOVING, DRAINED (everything moved, queues still held) or ENDED
 * @param queues    the lost node's KVS level queues this node holds
 * @param endReason why it ended (handed back, fenced, released by hand), empty while running
 */
public record AdoptionView(String namespace, String state, Instant startedAt, Optional<Instant> drainedAt, long moved,
                           List<String> queues, String endReason) {
}
