package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/** PING (0x0C). Request payload: empty (handle 0). OK answer: {@code i64 server time} (epoch ms). */
public final class PingCodec {
    private PingCodec() {
    }

    public static void writeRequest(ByteBuf out, long seq) {
        Requests.empty(out, Opcode.PING, seq, 0);
    }

    public static void writeOk(ByteBuf out, long seq, long serverTimeMillis) {
        int start = Frames.beginResponse(out, Opcode.PING.code(), Status.OK, seq, 0);
        out.writeLong(serverTimeMillis);
        Frames.finishFrame(out, start);
    }

    public static long readOk(ByteBuf payload) {
        return Wire.readLong(payload);
    }
}
