package org.jameskvs.replication;

/**
 * The network as the state machine sees it. {@link #send} must not block and must not call back
 * into the state machine from inside the call: the answer is delivered later, on the state
 * machine's thread, through {@link ReplicationCore#onResponse}.
 */
@FunctionalInterface
public interface NodeTransport {
    void send(NodeRequest request);
}
