package org.jameskvs.james;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

class PositionScanTest {
    /** Messages 0..n-1 at positions 0..n-1 of one copy; "the other copy" numbers them from 1000. */
    private static ReadResult block(int from, int count, int n, long offset, int space) {
        List<StoredMessage> messages = new ArrayList<>();
        for (int i = from; i < Math.min(n, from + count); i++) {
            messages.add(new StoredMessage(i + offset, ("m" + i).getBytes(StandardCharsets.US_ASCII), 5, 0, new byte[0], new byte[0]));
        }
        long next = messages.isEmpty() ? n + offset : messages.get(messages.size() - 1).position() + 1;
        return new ReadResult(Status.OK, null, 0, next, messages, space);
    }

    private static List<String> pass(int n, int switchAfterBlocks, int blockSize) {
        PositionScan scan = new PositionScan();
        List<String> seen = new ArrayList<>();
        int blocks = 0;
        while (!scan.isExhausted()) {
            boolean switched = blocks++ >= switchAfterBlocks;
            long offset = switched ? 1000 : 0;
            int from = (int) Math.max(0, scan.position() - offset);
            for (StoredMessage m : scan.accept(block(from, blockSize, n, offset, switched ? 1 : 0))) {
                seen.add(new String(m.id(), StandardCharsets.US_ASCII));
            }
        }
        return seen;
    }

    @Test
    void aCopyChangeRestartsThePassWithoutReturningAMessageTwice() {
        List<String> seen = pass(50, 2, 10);

        assertThat(seen).hasSize(50).doesNotHaveDuplicates();
    }

    @Test
    void pastTheTrackingBoundACopyChangeMayRepeatButNeverSkips() {
        int n = PositionScan.MAX_TRACKED + 500;
        List<String> seen = pass(n, (PositionScan.MAX_TRACKED + 100) / 1000, 1000);

        assertThat(new java.util.HashSet<>(seen)).hasSize(n);
        assertThat(seen.size()).isGreaterThan(n);
    }
}
