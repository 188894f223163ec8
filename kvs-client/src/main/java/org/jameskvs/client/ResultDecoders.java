package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.ErrorResponse;
import org.jameskvs.protocol.GetCodec;
import org.jameskvs.protocol.ListCodec;
import org.jameskvs.protocol.MessageRecord;
import org.jameskvs.protocol.OpenCodec;
import org.jameskvs.protocol.PingCodec;
import org.jameskvs.protocol.PutCodec;
import org.jameskvs.protocol.ReadCodec;
import org.jameskvs.protocol.StatCodec;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The client's results of every response: each turns what its operation's codec in
 * {@link org.jameskvs.protocol} reads ({@link PutCodec}, {@link ReadCodec}, ...) into the result
 * type. Stateless singletons.
 */
final class ResultDecoders {
    private ResultDecoders() {
    }

    /** OPEN's answer before it is bound to a {@link QueueHandle}. */
    record Opened(Status status, String reason, long txn, int handle, long epoch, long size, int flags, long lastSeq,
                  long digest, long store) {
    }

    static final ResultDecoder<Ack> ACK = ack(payload -> 0);

    /** PUT: the position. */
    static final ResultDecoder<Ack> ACK_WITH_VALUE = ack(PutCodec::readOk);

    /** PING: the server's time. */
    static final ResultDecoder<Ack> PING = ack(PingCodec::readOk);

    /**
     * An {@link Ack} whose value is read from an OK answer's payload by {@code okValue}; a SEQ_GAP
     * answer's value is the server's last seq.
     */
    private static ResultDecoder<Ack> ack(java.util.function.ToLongFunction<ByteBuf> okValue) {
        return new ResultDecoder<>() {
            @Override
            public Ack ok(long txn, ByteBuf payload) {
                return new Ack(Status.OK, txn, okValue.applyAsLong(payload), null);
            }

            @Override
            public Ack failed(Status status, long txn, String reason) {
                return new Ack(status, txn, 0, reason);
            }

            @Override
            public Ack failed(Status status, long txn, String reason, ByteBuf rest) {
                return new Ack(status, txn, ErrorResponse.readSeqGapLastSeq(status, rest), reason);
            }
        };
    }

    static final ResultDecoder<GetResult> GET = new ResultDecoder<>() {
        @Override
        public GetResult ok(long txn, ByteBuf payload) {
            return new GetResult(Status.OK, null, txn, GetCodec.readOk(payload));
        }

        @Override
        public GetResult failed(Status status, long txn, String reason) {
            return new GetResult(status, reason, txn, null);
        }
    };

    static final ResultDecoder<ReadResult> READ = new ResultDecoder<>() {
        @Override
        public ReadResult ok(long txn, ByteBuf payload) {
            long next = ReadCodec.readOkNextPosition(payload);
            int count = ReadCodec.readOkCount(payload);
            List<StoredMessage> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(MessageRecord.read(payload));
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
            StatCodec.Answer a = new StatCodec.Answer().wrap(p);
            return new QueueStat(Status.OK, null, txn, a.size(), a.bytes(), a.firstPosition(), a.nextPosition(),
                    a.earliestNotBefore(), a.epoch(), a.owner(), a.queueFlags(), a.lastSeq(), a.digest(), a.store());
        }

        @Override
        public QueueStat failed(Status status, long txn, String reason) {
            return new QueueStat(status, reason, txn, 0, 0, 0, 0, Long.MAX_VALUE, 0, null);
        }
    };

    static final ResultDecoder<ListResult> LIST = new ResultDecoder<>() {
        @Override
        public ListResult ok(long txn, ByteBuf payload) {
            int count = ListCodec.readOkCount(payload);
            List<QueueInfo> queues = new ArrayList<>(count);
            ListCodec.Row row = new ListCodec.Row();
            for (int i = 0; i < count; i++) {
                row.wrap(payload);
                queues.add(new QueueInfo(row.name(), row.size(), row.txn()));
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
            OpenCodec.Answer a = new OpenCodec.Answer().wrap(p);
            return new Opened(Status.OK, null, txn, a.handle(), a.epoch(), a.size(), a.queueFlags(), a.lastSeq(),
                    a.digest(), a.store());
        }

        @Override
        public Opened failed(Status status, long txn, String reason) {
            return new Opened(status, reason, txn, 0, 0, 0, 0, -1, 0, 0);
        }
    };

    /** Reads the reason string of an error response; tolerates a server that sent none. */
    static String reason(ByteBuf payload, Status status) {
        return ErrorResponse.readReason(payload, status);
    }
}
