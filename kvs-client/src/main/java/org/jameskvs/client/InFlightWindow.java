package org.jameskvs.client;

import org.jameskvs.protocol.Status;

import java.util.ArrayDeque;

/**
 * The requests written and not yet answered, oldest first. The server answers in request order,
 * so the head is always the next response and also the oldest deadline. Event loop only.
 */
final class InFlightWindow {
    private final ArrayDeque<Request<?>> requests;
    private final int capacity;

    InFlightWindow(int capacity) {
        this.capacity = capacity;
        this.requests = new ArrayDeque<>(Math.min(capacity, 4096));
    }

    boolean hasRoom() {
        return requests.size() < capacity;
    }

    void add(Request<?> request) {
        requests.addLast(request);
    }

    Request<?> peek() {
        return requests.peekFirst();
    }

    Request<?> poll() {
        return requests.pollFirst();
    }

    int size() {
        return requests.size();
    }

    int capacity() {
        return capacity;
    }

    /** Removes before completing: a callback may submit again, and must not see the failed request. */
    void failAll(Status status, String reason) {
        Request<?> r;
        while ((r = requests.pollFirst()) != null) {
            r.fail(status, reason);
        }
    }
}
