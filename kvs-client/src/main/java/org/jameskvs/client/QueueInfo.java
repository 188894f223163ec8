package org.jameskvs.client;

/** One row of a LIST answer. */
public record QueueInfo(String name, long size, long txn) {
}
