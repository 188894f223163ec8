package org.jameskvs.james;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.StoredMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass over a queue by position (browse, repository listing) that survives a change of the copy
 * serving reads. Positions are per copy ({@link ReadResult#positionSpace()}): when a block comes
 * from another copy, the pass restarts from position 0 of that copy and skips what it has already
 * returned, so every message live for the whole pass is returned exactly once (at least once past
 * {@link #MAX_TRACKED} messages).
 *
 * <p>Usage: {@code read(scan.position())}, then {@code scan.accept(result)}; the pass is over when
 * {@link #isExhausted()}.
 */
public final class PositionScan {
    private static final Logger LOGGER = LoggerFactory.getLogger(PositionScan.class);
    private static final int NO_SPACE_YET = Integer.MIN_VALUE;

    private long position;
    private int space = NO_SPACE_YET;
    private boolean exhausted;
    /**
     * Ids returned so far: only needed after a copy change, but it cannot be rebuilt then. Bounded,
     * so that a pass over a huge queue does not hold every id in James's heap (about 140 bytes
     * each): past {@link #MAX_TRACKED} ids, a pass restarted by a copy change may return a message
     * twice (never skip one), and says so in the log.
     */
    static final int MAX_TRACKED = 100_000;
    private final Set<ByteBuffer> returned = new HashSet<>();
    private boolean untracked;

    public long position() {
        return position;
    }

    public boolean isExhausted() {
        return exhausted;
    }

    /** The messages of an OK block that this pass has not returned yet (possibly none). */
    public List<StoredMessage> accept(ReadResult block) {
        if (block.positionSpace() != space) {
            boolean first = space == NO_SPACE_YET;
            space = block.positionSpace();
            if (!first && position != 0) {
                position = 0; // the block was read at a position of the old copy: read again from 0
                if (untracked) {
                    LOGGER.warn("The copy serving reads changed during a pass over more than {} messages: "
                        + "the pass restarts and may list some of them twice", MAX_TRACKED);
                }
                return List.of();
            }
        }
        List<StoredMessage> fresh = new ArrayList<>(block.messages().size());
        for (StoredMessage message : block.messages()) {
            if (untracked) {
                fresh.add(message);
            } else if (returned.add(ByteBuffer.wrap(message.id()))) {
                fresh.add(message);
                if (returned.size() >= MAX_TRACKED) {
                    untracked = true;
                    returned.clear();
                }
            }
        }
        position = Math.max(position, block.nextPosition());
        exhausted = block.messages().isEmpty();
        return fresh;
    }
}
