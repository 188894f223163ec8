package org.jameskvs.james.queue;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.PositionScan;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;

/**
 * Walks every live message of a James queue, delayed ones included (no readyBefore filter): highest
 * priority level first, position order within a level, one READ block at a time so memory stays
 * bounded. Reading by position tolerates concurrent enqueue, dequeue, removal and clear: it simply
 * sees or misses what changed. A change of the copy serving reads restarts the level without
 * returning a message twice ({@link PositionScan}).
 */
final class QueueBrowser implements Iterator<QueueBrowser.Entry> {

    record Entry(int level, StoredMessage message) {
    }

    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final Iterator<Integer> remainingLevels;
    private final ArrayDeque<StoredMessage> block = new ArrayDeque<>();
    private int level = -1;
    private PositionScan scan;

    QueueBrowser(PriorityLevels levels, KvsSpoolConfiguration configuration) {
        this.levels = levels;
        this.configuration = configuration;
        List<Integer> snapshot = levels.levels();
        this.remainingLevels = snapshot.iterator();
    }

    @Override
    public boolean hasNext() {
        while (block.isEmpty()) {
            if (scan == null || scan.isExhausted()) {
                if (!remainingLevels.hasNext()) {
                    return false;
                }
                level = remainingLevels.next();
                scan = new PositionScan();
            }
            readBlock();
        }
        return true;
    }

    @Override
    public Entry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return new Entry(level, block.poll());
    }

    private void readBlock() {
        KvsQueue queue = levels.queue(level);
        ReadResult result = Futures.await(queue.read(scan.position(), configuration.readBlockSize(), configuration.readBlockBytes(), 0),
            configuration.requestTimeout(), "browse " + queue.name());
        if (!result.isOk()) {
            throw new KvsException(result.status(), result.reason());
        }
        block.addAll(scan.accept(result));
    }
}
