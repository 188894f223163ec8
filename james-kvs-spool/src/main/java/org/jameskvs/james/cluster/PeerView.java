package org.jameskvs.james.cluster;

/**
 * Another James node as this node sees it: its namespace and the lease of its spool queue.
 *
 * @param owner          the owner name in the lease record (an adopter's owner name reads {@code adopted-by:<owner>})
 * @param unrenewedMillis how long, by this node's clock, the record has not changed
 * @param expired        unrenewed for at least the lease timeout
 * @param adoptedHere    this node holds the namespace's queues now
 */
public record PeerView(String namespace, String owner, long epoch, long seq, long unrenewedMillis, boolean expired,
                       boolean adoptedHere) {
}
