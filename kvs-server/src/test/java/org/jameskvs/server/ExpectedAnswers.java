package org.jameskvs.server;

import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.ProtocolVersion;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Status;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What a server must answer to a byte stream, decided from the bytes alone by the framing rules of
 * the protocol's package doc (written again here, independently of the server's splitter): each
 * whole frame gets one answer echoing its sequence number and opcode; a frame over the size limit
 * is answered {@code FRAME_TOO_LARGE} once its header is in, and its bytes are skipped; a length
 * below the header size or a version other than 1 means framing is lost: a {@code BAD_FRAME} answer,
 * then the connection closes. Where the bytes alone decide the status (unknown opcode, oversized,
 * a handle this connection cannot hold) it is given; otherwise the status is {@code null}: any
 * documented answer (OK when the mutation happened to leave a valid request).
 */
final class ExpectedAnswers {
    /** One answer: the frame's sequence number and opcode byte, and its status where the bytes decide it. */
    record Answer(long sequence, byte opcode, Status status) {
    }

    /** Where the stream ends for the framing. */
    enum End {
        /** at a frame boundary: the connection goes on */
        CLEAN,
        /** inside a frame (or a skip): the server waits for {@link #missing} more bytes */
        INCOMPLETE,
        /** framing lost: BAD_FRAME, then close */
        LOST
    }

    final List<Answer> answers = new ArrayList<>();
    End end;
    long missing;
    /** With {@link End#LOST}: the stream offset at which the loss shows (the server closes there). */
    int lostAt;

    private ExpectedAnswers() {
    }

    /**
     * @param handles the handles this connection holds before the stream (1..handles); an OPEN in the
     *                stream may add one per frame, so only a handle beyond that is surely bad
     */
    static ExpectedAnswers of(byte[] s, int maxFrameBytes, int handles) {
        ExpectedAnswers e = new ExpectedAnswers();
        ByteBuffer bb = ByteBuffer.wrap(s);
        int at = 0;
        long skip = 0;
        while (true) {
            if (skip > 0) {
                long take = Math.min(skip, s.length - at);
                at += (int) take;
                skip -= take;
                if (skip > 0) {
                    return e.ends(End.INCOMPLETE, skip);
                }
            }
            int rem = s.length - at;
            if (rem == 0) {
                return e.ends(End.CLEAN, 0);
            }
            if (rem < 4) {
                return e.ends(End.INCOMPLETE, 4 - rem);
            }
            long length = Integer.toUnsignedLong(bb.getInt(at));
            if (length < RequestDescriptor.HEADER_SIZE) {
                e.lostAt = at + 4;
                return e.ends(End.LOST, 0);
            }
            if (rem < 5) {
                return e.ends(End.INCOMPLETE, 1);
            }
            if (s[at + 4] != ProtocolVersion.CURRENT) {
                e.lostAt = at + 5;
                return e.ends(End.LOST, 0);
            }
            long wanted = length > maxFrameBytes ? 4 + RequestDescriptor.SEQUENCE_OFFSET + 8 : 4 + length;
            if (rem < wanted) {
                return e.ends(End.INCOMPLETE, wanted - rem);
            }
            byte opcode = s[at + 4 + RequestDescriptor.OPCODE_OFFSET];
            long sequence = bb.getLong(at + 4 + RequestDescriptor.SEQUENCE_OFFSET);
            if (length > maxFrameBytes) {
                e.answers.add(new Answer(sequence, opcode, Status.FRAME_TOO_LARGE));
                at += 4;
                skip = length;
                continue;
            }
            int handle = bb.getInt(at + 4 + RequestDescriptor.HANDLE_OFFSET);
            e.answers.add(new Answer(sequence, opcode, decided(opcode, handle, handles + e.answers.size())));
            at += (int) wanted;
        }
    }

    private static Status decided(byte opcode, int handle, int maxHandle) {
        Opcode op = Opcode.fromCode(opcode);
        if (op == null) {
            return Status.UNKNOWN_OPCODE;
        }
        boolean needsHandle = op != Opcode.AUTH && op != Opcode.OPEN && op != Opcode.LIST && op != Opcode.PING;
        if (needsHandle && (handle < 1 || handle > maxHandle)) {
            return Status.BAD_HANDLE;
        }
        return null;
    }

    private ExpectedAnswers ends(End how, long missingBytes) {
        end = how;
        missing = missingBytes;
        return this;
    }
}
