package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.NodeOp;
import org.jameskvs.replication.NodeRequest;
import org.jameskvs.replication.NodeResponse;

/**
 * The client's side of the wire for the simulation (test code in the client's package, to reach its
 * package-private {@link ResultDecoders}): a state machine's {@link NodeRequest} becomes the request
 * frame the KvsClient would write for it (the encoders {@link QueueHandle} and {@link KvsClient} use,
 * picked as {@code KvsNodeTransport} picks the client call), and a response frame becomes the
 * {@link NodeResponse} that {@code KvsNodeTransport} would build from the client's decoded result.
 */
public final class NodeWireCodec {
    private static final byte[] EMPTY = new byte[0];

    private NodeWireCodec() {
    }

    public static void auth(ByteBuf out, long seq, String user, String password) {
        Requests.auth(out, seq, user, password);
    }

    /** @param handle the server handle of the queue on this connection (0 for OPEN and PING) */
    public static void encode(ByteBuf out, long seq, int handle, NodeRequest r) {
        byte[] st = r.state() == null ? EMPTY : r.state();
        byte[] body = r.body() == null ? EMPTY : r.body();
        if (r.queueSeq() > 0 && r.op().isMutation()) {
            long qs = r.queueSeq();
            long c = r.committed();
            switch (r.op()) {
                case PUT, PUT_REPLACING -> Requests.putSequenced(out, seq, handle,
                        r.op() == NodeOp.PUT_REPLACING ? RequestDescriptor.FLAG_REPLACE_EXISTING : 0, qs, c, r.id(),
                        r.priority(), r.notBefore(), st, body);
                case DELETE -> Requests.deleteSequenced(out, seq, handle, qs, c, r.id());
                case REPLACE -> Requests.replaceSequenced(out, seq, handle, qs, c, r.id(), r.priority(), r.notBefore(), st);
                default -> Requests.clearSequenced(out, seq, handle, qs, c);
            }
            return;
        }
        if (r.position() > 0 && (r.op() == NodeOp.PUT || r.op() == NodeOp.PUT_REPLACING)) {
            // A rebuild's copy at the source's position (as QueueHandle.putAt sends it).
            Requests.putAt(out, seq, handle, r.op() == NodeOp.PUT_REPLACING ? RequestDescriptor.FLAG_REPLACE_EXISTING : 0,
                    r.position(), r.id(), r.priority(), r.notBefore(), st, body);
            return;
        }
        switch (r.op()) {
            case PING -> Requests.empty(out, Opcode.PING, seq, 0);
            case OPEN_WRITE -> Requests.open(out, seq, r.queue(), OpenMode.WRITE, r.epoch(), 0, 0, r.owner(), r.expectedStore());
            case OPEN_READ -> {
                OpenOptions o = OpenOptions.reader();
                Requests.open(out, seq, r.queue(), o.mode(), o.epoch(), o.maxMessages(), o.maxBytes(), o.owner(),
                        r.expectedStore());
            }
            case PUT -> Requests.put(out, seq, handle, 0, r.id(), r.priority(), r.notBefore(), st, body);
            case PUT_REPLACING -> Requests.put(out, seq, handle, RequestDescriptor.FLAG_REPLACE_EXISTING, r.id(),
                    r.priority(), r.notBefore(), st, body);
            case DELETE -> Requests.delete(out, seq, handle, r.id());
            case REPLACE -> Requests.replace(out, seq, handle, r.id(), r.priority(), r.notBefore(), st);
            case CLEAR -> Requests.empty(out, Opcode.CLEAR, seq, handle);
            case REBASE -> Requests.rebase(out, seq, handle, r.fromPosition(), r.readyBefore(), r.position());
            case ALIGN -> Requests.rebaseIfAt(out, seq, handle, r.fromPosition(), r.position(), r.readyBefore());
            case COMMIT -> Requests.commit(out, seq, handle, r.fromPosition());
            case GET -> Requests.get(out, seq, handle, r.id());
            case READ -> Requests.read(out, seq, handle, r.fromPosition(), r.maxCount(), r.maxBytes(), r.readyBefore());
            case READ_UNCOMMITTED -> Requests.readUncommitted(out, seq, handle, r.fromPosition(), r.maxCount(),
                    r.maxBytes(), r.readyBefore());
            case STAT -> Requests.empty(out, Opcode.STAT, seq, handle);
            default -> throw new IllegalArgumentException("no frame for " + r.op());
        }
    }

    /**
     * Takes the next response frame off {@code in} (length prefix and all) and checks it answers request
     * {@code seq}, as the client's ResponseHandler does.
     *
     * @return the frame, positioned at its version byte; null when {@code in} holds no whole frame
     */
    public static ByteBuf nextFrame(ByteBuf in, long seq) {
        if (in.readableBytes() < 4 || in.readableBytes() < 4 + in.getInt(in.readerIndex())) {
            return null;
        }
        int length = in.readInt();
        ByteBuf frame = in.readSlice(length);
        long answered = Frames.responseSequence(frame);
        if (answered != seq && Frames.responseStatus(frame) != Status.BAD_FRAME) {
            throw new IllegalStateException("response " + answered + " while expecting " + seq);
        }
        return frame;
    }

    /** The response frame of {@code r}, decoded by the client's decoder for its opcode. OPEN's handle is in {@code value}. */
    public static NodeResponse decode(NodeRequest r, ByteBuf frame) {
        long tok = r.token();
        Status status = Frames.responseStatus(frame);
        long txn = Frames.responseTxn(frame);
        Frames.skipResponseHeader(frame);
        String reason = status == Status.OK ? null : ResultDecoders.reason(frame, status);
        switch (r.op()) {
            case OPEN_WRITE, OPEN_READ -> {
                ResultDecoders.Opened o = status == Status.OK ? ResultDecoders.OPENED.ok(txn, frame)
                        : ResultDecoders.OPENED.failed(status, txn, reason, frame);
                return new NodeResponse(tok, o.status(), o.txn(), o.handle(), o.reason(), o.epoch(), o.size(), null,
                        null, null, o.flags(), o.lastSeq(), o.digest(), o.store());
            }
            case GET -> {
                GetResult g = status == Status.OK ? ResultDecoders.GET.ok(txn, frame)
                        : ResultDecoders.GET.failed(status, txn, reason, frame);
                return new NodeResponse(tok, g.status(), g.txn(), 0, g.reason(), 0, 0, g, null, null);
            }
            case READ, READ_UNCOMMITTED -> {
                ReadResult rr = status == Status.OK ? ResultDecoders.READ.ok(txn, frame)
                        : ResultDecoders.READ.failed(status, txn, reason, frame);
                return new NodeResponse(tok, rr.status(), rr.txn(), 0, rr.reason(), 0, 0, null, rr, null);
            }
            case STAT -> {
                QueueStat st = status == Status.OK ? ResultDecoders.STAT.ok(txn, frame)
                        : ResultDecoders.STAT.failed(status, txn, reason, frame);
                return new NodeResponse(tok, st.status(), st.txn(), 0, st.reason(), 0, 0, null, null, st);
            }
            default -> {
                boolean withValue = r.op() == NodeOp.PING || r.op() == NodeOp.PUT || r.op() == NodeOp.PUT_REPLACING;
                ResultDecoder<Ack> d = withValue ? ResultDecoders.ACK_WITH_VALUE : ResultDecoders.ACK;
                Ack a = status == Status.OK ? d.ok(txn, frame) : d.failed(status, txn, reason, frame);
                return NodeResponse.of(tok, a.status(), a.txn(), a.value(), a.reason());
            }
        }
    }

    /** The messages of a READ payload (what {@code QueueStore.read} writes after the response header). */
    public static ReadResult readPayload(long txn, ByteBuf payload) {
        return ResultDecoders.READ.ok(txn, payload);
    }
}
