package org.jameskvs.server.net;

import io.netty.channel.Channel;

import java.util.HashMap;
import java.util.Map;

/**
 * Which connection holds the write handle of each queue (the paper's "ownership": the queue is
 * related to the connection that created it). Event-loop confined.
 */
final class WriterRegistry {
    private final Map<String, Channel> writers = new HashMap<>();

    /** @return the live connection holding the write handle, or null. */
    Channel writer(String queue) {
        Channel c = writers.get(queue);
        if (c != null && !c.isActive()) {
            writers.remove(queue);
            return null;
        }
        return c;
    }

    void claim(String queue, Channel channel) {
        writers.put(queue, channel);
    }

    void release(String queue, Channel channel) {
        writers.remove(queue, channel);
    }

    void forget(String queue) {
        writers.remove(queue);
    }
}
