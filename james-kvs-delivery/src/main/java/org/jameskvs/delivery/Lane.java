package org.jameskvs.delivery;

import org.apache.james.queue.api.MailQueueName;

/**
 * One destination lane: its own mail queue, its own delivery workers, limits and suspension. A
 * dedicated lane carries one recipient domain; a bucket carries every tail domain hashing to it.
 */
public record Lane(String name, boolean dedicated) {

    public MailQueueName queueName() {
        return MailQueueName.of(name);
    }
}
