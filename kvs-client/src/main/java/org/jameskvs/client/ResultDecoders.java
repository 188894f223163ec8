package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.MalformedPayloadException;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.protocol.Wire;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Payload decoders of every response, as specified in {@link org.jameskvs.protocol}. Stateless singletons. */
final class ResultDecoders {
    /** Smallest message record: position, 1-byte id, priority, notBefore, two empty blobs. */
    private static final int MIN_RECORD_BYTES = 8 + 2 + 1 + 8 + 4 + 4;
    /** Smallest LIST row: empty name, size, txn. */
    private static final int MIN_LIST_ROW_BYTES = 2 + 8 + 8;

    private ResultDecoders() {
    }

    /** OPEN's answer before it is bound to a {@link QueueHandle}. */
    record Opened(Status status, String reason, long txn, int handle, long epoch, long size, int flags, long lastSeq,
                  long digest) {
    }

    static final ResultDecoder<Ack> ACK = new ResultDecoder<>() {
        @Override
        public Ack ok(long txn, ByteBuf payload) {
            return new Ack(Status.OK, txn, 0, null);
        }

        @Override
        public Ack failed(Status status, long txn, String reason) {
            return new Ack(status, txn, 0, reason);
        }

        @Override
        public Ack failed(Status status, long txn, String reason, ByteBuf rest) {
            return new Ack(status, txn, gapLastSeq(status, rest), reason);
        }
    };

    /** PUT (position) and PING (server time): an i64 payload. */
    static final ResultDecoder<Ack> ACK_WITH_VALUE = new ResultDecoder<>() {
        @Override
        public Ack ok(long txn, ByteBuf payload) {
            return new Ack(Status.OK, txn, Wire.readLong(payload), null);
        }

        @Override
        public Ack failed(Status status, long txn, String reason) {
            return new Ack(status, txn, 0, reason);
        }

        @Override
        public Ack failed(Status status, long txn, String reason, ByteBuf rest) {
            return new Ack(status, txn, gapLastSeq(status, rest), reason);
        }
    };

    static final ResultDecoder<GetResult> GET = new ResultDecoder<>() {
        @Override
        public GetResult ok(long txn, ByteBuf payload) {
            return new GetResult(Status.OK, null, txn, StoredMessage.readRecord(payload));
        }

        @Override
        public GetResult failed(Status status, long txn, String reason) {
            return new GetResult(status, reason, txn, null);
        }
    };

    static final ResultDecoder<ReadResult> READ = new ResultDecoder<>() {
        @Override
        public ReadResult ok(long txn, ByteBuf payload) {
            long next = Wire.readLong(payload);
            int count = checkCount(Wire.readInt(payload), payload, MIN_RECORD_BYTES);
            List<StoredMessage> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(StoredMessage.readRecord(payload));
            }
            return new ReadResult(Status.OK, null, txn, next, Collections.unmodifiableList(messages));
        }

        @Override
        public ReadResult failed(Status status, long txn, String reason) {
            return new ReadResult(status, reason, txn, -1, List.of());
        }
    };

    static final ResultDecoder<QueueStat> STAT = new ResultDecoder<>() {
        @Override
        public QueueStat ok(long txn, ByteBuf p) {
            return new QueueStat(Status.OK, null, txn, Wire.readLong(p), Wire.readLong(p), Wire.readLong(p),
                    Wire.readLong(p), Wire.readLong(p), Wire.readLong(p), Wire.readString(p), queueFlags(p),
                    lastSeq(p), Wire.readLong(p));
        }

        @Override
        public QueueStat failed(Status status, long txn, String reason) {
            return new QueueStat(status, reason, txn, 0, 0, 0, 0, Long.MAX_VALUE, 0, null);
        }
    };

    static final ResultDecoder<ListResult> LIST = new ResultDecoder<>() {
        @Override
        public ListResult ok(long txn, ByteBuf payload) {
            int count = checkCount(Wire.readInt(payload), payload, MIN_LIST_ROW_BYTES);
            List<QueueInfo> queues = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                queues.add(new QueueInfo(Wire.readString(payload), Wire.readLong(payload), Wire.readLong(payload)));
            }
            return new ListResult(Status.OK, null, Collections.unmodifiableList(queues));
        }

        @Override
        public ListResult failed(Status status, long txn, String reason) {
            return new ListResult(status, reason, List.of());
        }
    };

    static final ResultDecoder<Opened> OPENED = new ResultDecoder<>() {
        @Override
        public Opened ok(long txn, ByteBuf p) {
            return new Opened(Status.OK, null, txn, Wire.readInt(p), Wire.readLong(p), Wire.readLong(p), queueFlags(p),
                    lastSeq(p), Wire.readLong(p));
        }

        @Override
        public Opened failed(Status status, long txn, String reason) {
            return new Opened(status, reason, txn, 0, 0, 0, 0, -1, 0);
        }
    };

    /** Reads the reason string of an error response; tolerates a server that sent none. */
    static String reason(ByteBuf payload, Status status) {
        if (payload.readableBytes() < 2) {
            return status.description();
        }
        try {
            return Wire.readString(payload);
        } catch (MalformedPayloadException e) {
            return status.description();
        }
    }

    /**
     * The {@code u8 queue flags} that end OPEN and STAT answers; 0 when the server sent none (it
     * predates them: the byte was added after every other field).
     */
    private static int queueFlags(ByteBuf payload) {
        return payload.isReadable() ? payload.readUnsignedByte() : 0;
    }

    /**
     * The {@code i64 last seq} after the queue flags; the digest follows it. Protocol version 2
     * always sends both (a version-1 server is refused at the first frame).
     */
    private static long lastSeq(ByteBuf payload) {
        return Wire.readLong(payload);
    }

    /** SEQ_GAP's i64 after the reason: the server's last seq (0 for other statuses or when absent). */
    private static long gapLastSeq(Status status, ByteBuf rest) {
        return status == Status.SEQ_GAP && rest.readableBytes() >= 8 ? rest.readLong() : 0;
    }

    /** Rejects counts the frame cannot hold before anything is allocated for them. */
    private static int checkCount(int count, ByteBuf payload, int minBytesEach) {
        if (count < 0 || (long) count * minBytesEach > payload.readableBytes()) {
            throw new MalformedPayloadException("count " + count + " does not fit in " + payload.readableBytes() + " bytes");
        }
        return count;
    }
}
