package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/** AUTH (0x01). Request payload: {@code string user, string password}. OK answer: empty. */
public final class AuthCodec {
    private String user;
    private String password;

    public static void writeRequest(ByteBuf out, long seq, String user, String password) {
        int start = Frames.beginRequest(out, Opcode.AUTH, seq, 0);
        Wire.writeString(out, user);
        Wire.writeString(out, password);
        Frames.finishFrame(out, start);
    }

    public AuthCodec wrap(ByteBuf in) {
        user = Wire.readString(in);
        password = Wire.readString(in);
        return this;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    public static void writeOk(ByteBuf out, long seq) {
        Frames.writeEmptyOk(out, Opcode.AUTH.code(), seq, 0);
    }
}
