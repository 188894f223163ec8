package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The numbered messages ({@code <prefix>0, <prefix>1, ...}, each with a body that names its number)
 * that the kill -9 and capacity tests write to a server process and read back: what comes back
 * must be exactly a prefix of what was sent, in order, byte for byte.
 */
final class PutSequence {
    private PutSequence() {
    }

    /** Sends puts {@code prefix0..prefix(n-1)} in windows of 1,000 without waiting, then reads the answers; @return how many were OK. */
    static long pipelinedPuts(RawClient c, int h, String prefix, int n, int size) throws IOException {
        long ok = 0;
        int window = 1000;
        for (int base = 0; base < n; base += window) {
            ByteBuf batch = Unpooled.buffer(window * (size + 64));
            int end = Math.min(n, base + window);
            for (int i = base; i < end; i++) {
                Requests.put(batch, c.nextSeq(), h, (prefix + i).getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0],
                        body(i, size));
            }
            c.sendRaw(ByteBufUtil.getBytes(batch));
            for (int i = base; i < end; i++) {
                if (c.receive().status() == Status.OK) {
                    ok++;
                }
            }
        }
        return ok;
    }

    /** The body of message {@code i}: its number, then one repeated letter. */
    static byte[] body(int i, int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) ('a' + i % 26));
        byte[] tag = Integer.toString(i).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(tag, 0, b, 0, tag.length);
        return b;
    }

    /**
     * Reads the whole queue in blocks of 1,000 and checks that message k is {@code prefix + k} with
     * {@code body(k, size)}, byte-exact (streaming: nothing is kept). @return how many there are
     */
    static int readBackInOrder(RawClient c, int h, String prefix, int size) throws IOException {
        int[] seen = {0};
        c.readAll(h, 1000, 4 << 20, m -> {
            int k = seen[0];
            String id = new String(m.id(), StandardCharsets.UTF_8);
            if (!id.equals(prefix + k) || !Arrays.equals(m.body(), body(k, size))) {
                throw new AssertionError("message " + k + " read back as " + id + " with a body of "
                        + m.body().length + " bytes " + (id.equals(prefix + k) ? "that differs" : ""));
            }
            seen[0]++;
        });
        return seen[0];
    }
}
