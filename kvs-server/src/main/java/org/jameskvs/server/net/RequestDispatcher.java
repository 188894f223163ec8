package org.jameskvs.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.collection.IntObjectHashMap;
import org.jameskvs.protocol.AuthCodec;
import org.jameskvs.protocol.CommitCodec;
import org.jameskvs.protocol.DeleteCodec;
import org.jameskvs.protocol.ErrorResponse;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.GetCodec;
import org.jameskvs.protocol.ListCodec;
import org.jameskvs.protocol.MalformedPayloadException;
import org.jameskvs.protocol.OpenCodec;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.OversizedFrame;
import org.jameskvs.protocol.PingCodec;
import org.jameskvs.protocol.PutCodec;
import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.ReadCodec;
import org.jameskvs.protocol.RebaseCodec;
import org.jameskvs.protocol.ReplaceCodec;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.SequencedPrefix;
import org.jameskvs.protocol.StatCodec;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.metrics.BlockTally;
import org.jameskvs.server.storage.MutationOutcome;
import org.jameskvs.server.storage.QueueState;
import org.jameskvs.server.storage.QueueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the requests of one authenticated connection, in order, and answers each. Responses of a
 * block (everything one socket read delivered) go into one buffer; at the end of the block that
 * buffer is written and the {@link GroupCommitter} flushes it after the journal commit. Every
 * request gets exactly one response; a bad request gets an error status and the connection goes
 * on. Event-loop confined, like the store.
 */
final class RequestDispatcher extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(RequestDispatcher.class);
    /** Past this size the pending responses are handed to the channel mid-block (still unflushed). */
    private static final int RESPONSE_CHUNK = 256 * 1024;

    private final ServerContext server;
    /** This handler's context, from the first frame on. */
    private ChannelHandlerContext ctx;
    private final IntObjectHashMap<QueueHandle> handles = new IntObjectHashMap<>();
    private int nextHandle = 1;
    private ByteBuf pending;
    private long blockStart;
    private int blockRequests;
    private final BlockTally tally = new BlockTally();

    RequestDispatcher(ServerContext server) {
        this.server = server;
    }

    /**
     * Frames arrive here through the pipeline only until the first one: reaching this handler means
     * the connection is authenticated, so from then on {@link RequestFrames} hands them over in place.
     */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (this.ctx == null) {
            this.ctx = ctx;
            RequestFrames frames = ctx.pipeline().get(RequestFrames.class);
            if (frames != null) {
                frames.deliverTo(this);
            }
        }
        if (msg instanceof OversizedFrame big) {
            oversized(big.opcode(), big.sequence(), big.length());
            return;
        }
        ByteBuf frame = (ByteBuf) msg;
        try {
            frame(frame);
        } finally {
            frame.release();
        }
    }

    /** One request frame, valid only during the call (reader index at its version byte). */
    void frame(ByteBuf frame) {
        ByteBuf out = pendingResponses();
        handle(ctx, frame, out);
        if (out.readableBytes() >= RESPONSE_CHUNK) {
            ctx.write(out, ctx.voidPromise());
            server.metrics.bytesSent(out.readableBytes());
            pending = ctx.alloc().ioBuffer(4096);
        }
    }

    /** A frame over the limit, whose bytes the framing skips. */
    void oversized(byte opcode, long sequence, long length) {
        ByteBuf out = pendingResponses();
        Frames.writeError(out, opcode, Status.FRAME_TOO_LARGE, sequence, 0,
                "frame of " + length + " bytes exceeds the limit of " + server.config.maxFrameBytes());
        server.metrics.error(Status.FRAME_TOO_LARGE);
    }

    /** The responses of the current block, starting a block with the first request of a read. */
    private ByteBuf pendingResponses() {
        if (pending == null) {
            pending = ctx.alloc().ioBuffer(4096);
            blockStart = System.nanoTime();
        }
        blockRequests++;
        return pending;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (pending != null) {
            server.metrics.bytesSent(pending.readableBytes());
            ctx.write(pending, ctx.voidPromise());
            pending = null;
            server.metrics.block(System.nanoTime() - blockStart, blockRequests);
            tally.flushTo(server.metrics);
            blockRequests = 0;
            server.committer.flushAfterCommit(ctx);
        }
        // Back-pressure: a client that pipelines faster than it reads its answers stops being read.
        if (!ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    /**
     * Lost framing in the middle of a read: the frames before the bad bytes were applied and their
     * answers wait in {@code pending}. They go out first, after their commit as at the end of any
     * read, so the client gets every answer in order before the BAD_FRAME that the error handler
     * writes (found by ServerFuzzTest: the BAD_FRAME came first and the earlier answers never).
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (pending != null) {
            channelReadComplete(ctx);
            server.committer.commitAndFlush();
        }
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Channel ch = ctx.channel();
        handles.values().forEach(h -> server.writers.release(h.queue().name(), ch));
        handles.clear();
        tally.flushTo(server.metrics);
        if (pending != null) {
            pending.release();
            pending = null;
        }
        ctx.fireChannelInactive();
    }

    private void handle(ChannelHandlerContext ctx, ByteBuf frame, ByteBuf out) {
        byte code = Frames.requestOpcode(frame);
        long seq = Frames.requestSequence(frame);
        int handleId = Frames.requestHandle(frame);
        int flags = Frames.requestFlags(frame);
        tally.request(code, frame.readableBytes() + 4);
        Opcode op = Opcode.fromCode(code);
        int mark = out.writerIndex();
        Status status;
        String reason = null;
        try {
            Frames.skipRequestHeader(frame);
            status = op == null ? Status.UNKNOWN_OPCODE : apply(ctx, op, seq, handleId, flags, frame, out);
        } catch (MalformedPayloadException e) {
            status = Status.BAD_REQUEST;
            reason = e.getMessage();
        } catch (RuntimeException e) {
            LOG.error("request {} (opcode {}) failed", seq, code, e);
            status = Status.INTERNAL_ERROR;
            reason = e.toString();
        }
        if (status != Status.OK) {
            out.writerIndex(mark);
            QueueHandle h = handles.get(handleId);
            long txn = errorTxn >= 0 ? errorTxn : h == null ? 0 : h.queue().txn();
            String why = reason != null ? reason : errorReason != null ? errorReason
                    : op == null ? "unknown opcode " + (code & 0xFF) : null;
            if (status == Status.SEQ_GAP) {
                ErrorResponse.writeSeqGap(out, code, seq, txn, why, gapLastSeq);
            } else {
                ErrorResponse.write(out, code, status, seq, txn, why);
            }
            server.metrics.error(status);
        }
        if (addressed != null) { // a request to a queue (through its handle): counted for that queue
            addressed.tally().request(out.writerIndex() - mark);
            addressed = null;
        }
        errorTxn = -1;
        errorReason = null;
    }

    /** Applies one request; on OK it has written the whole response, on error the caller writes it. */
    private Status apply(ChannelHandlerContext ctx, Opcode op, long seq, int handleId, int flags, ByteBuf in,
                         ByteBuf out) {
        switch (op) {
            case PING -> {
                PingCodec.writeOk(out, seq, System.currentTimeMillis());
                return Status.OK;
            }
            case AUTH -> {
                // Already authenticated: a second AUTH is harmless.
                AuthCodec.writeOk(out, seq);
                return Status.OK;
            }
            case OPEN -> {
                return open(ctx.channel(), seq, in, out);
            }
            case LIST -> {
                int start = ListCodec.beginOk(out, seq, server.store.queues().size());
                for (QueueState q : server.store.queues()) {
                    // the size operators see: mail, not the replication's record
                    ListCodec.writeRow(out, q.name(), q.userSize(), q.txn());
                }
                Frames.finishFrame(out, start);
                return Status.OK;
            }
            default -> {
                QueueHandle h = handles.get(handleId);
                if (h == null) {
                    return Status.BAD_HANDLE;
                }
                addressed = h;
                if (server.store.queue(h.queue().name()) != h.queue()) {
                    return Status.NO_SUCH_QUEUE; // dropped since it was opened
                }
                if (op.isMutation()) {
                    if (h.mode() != OpenMode.WRITE) {
                        return Status.READ_ONLY;
                    }
                    if (h.epoch() < h.queue().epoch()) {
                        return Status.STALE_EPOCH;
                    }
                }
                if ((flags & RequestDescriptor.FLAG_COMMITTED) != 0
                        && ((flags & RequestDescriptor.FLAG_SEQUENCED) == 0 || !SequencedPrefix.isSequenceable(op))) {
                    throw new MalformedPayloadException("flag 0x0008 (committed seq) needs a sequenced mutation");
                }
                if ((flags & RequestDescriptor.FLAG_SEQUENCED) != 0 && SequencedPrefix.isSequenceable(op)) {
                    return applySequenced(ctx.channel(), op, seq, handleId, flags, h, in, out);
                }
                return applyToQueue(ctx.channel(), op, seq, handleId, flags, h, in, out);
            }
        }
    }

    /**
     * A mutation carrying the queue seq its writer gave it (see the protocol's package doc): the
     * next one is applied (a final refusal or DISK_FULL takes its seq too, as a SKIP), a repeat is answered with
     * the stored outcome and applied nothing, a gap is refused with the queue's last seq.
     */
    private Status applySequenced(Channel ch, Opcode op, long seq, int handleId, int flags, QueueHandle h, ByteBuf in,
                                  ByteBuf out) {
        QueueState q = h.queue();
        SequencedPrefix p = prefix.wrap(in, flags);
        long queueSeq = p.queueSeq();
        declareCommitted(q, p.committedSeq());
        long last = q.lastSeq();
        if (queueSeq <= last) {
            MutationOutcome o = server.store.outcome(q, queueSeq);
            if (o == null) {
                errorReason = "seq " + queueSeq + " was applied or refused long ago (the queue is at " + last
                        + "); its outcome is no longer kept";
                return Status.SEQ_TOO_OLD;
            }
            if (o.status() != Status.OK) {
                errorTxn = o.txn();
                errorReason = "repeat of seq " + queueSeq + ": " + o.status().description();
                return o.status();
            }
            if (op == Opcode.PUT) {
                PutCodec.writeOk(out, seq, o.txn(), o.value());
            } else {
                Frames.writeEmptyOk(out, op.code(), seq, o.txn());
            }
            return Status.OK;
        }
        if (queueSeq > last + 1) {
            errorReason = "seq " + queueSeq + " where the queue's next is " + (last + 1) + ": resend from there";
            gapLastSeq = last;
            return Status.SEQ_GAP;
        }
        Status s = applyToQueue(ch, op, seq, handleId, flags, h, in, out);
        if (s == Status.OK) {
            server.store.keepOutcome(q, op == Opcode.PUT ? server.store.lastPutPosition() : 0);
            return s;
        }
        if (s.takesQueueSeq()) {
            // A final refusal, or DISK_FULL: the SKIP goes into the store's reserve (Journal.checkSpace),
            // so a full node stays in step with the other copy (which may have had room for this PUT)
            // instead of leaving a gap that every later mutation would bounce on.
            Status skipped = server.store.skip(q, op, s);
            if (skipped == Status.OK) {
                return s;
            }
            errorReason = "refused (" + s + ") and could not even record the refusal: " + server.store.lastError();
            return Status.STORAGE_ERROR; // the seq is not taken: the writer resends from it
        }
        return s; // the store failed (an I/O error, ...): the seq is not taken
    }

    /**
     * Flag 0x0008: the writer's commit point, read with the queue seq ({@link SequencedPrefix}; see the
     * protocol's package doc), kept before the mutation is applied (it is below the mutation's seq). A journal failure
     * leaves the commit point lower, which only shows readers less: the mutation goes on.
     */
    private void declareCommitted(QueueState q, long committed) {
        if (committed >= 0) {
            server.store.commitPoint(q, committed);
        }
    }

    /** The highest position READ and GET through this handle show: read handles stop at the commit point. */
    private static long visibleLimit(QueueHandle h, int flags) {
        return h.mode() == OpenMode.READ && (flags & RequestDescriptor.FLAG_UNCOMMITTED) == 0
                ? QueueStore.visibleLimit(h.queue()) : Long.MAX_VALUE;
    }

    /** The handle the current request is addressed through (counted in its queue's tally); reset per request. */
    private QueueHandle addressed;
    /** Set by a request that answers an error with other than the current txn (a repeat's stored one); reset per request. */
    private long errorTxn = -1;
    /** The reason of an error answer, when the request gave one; reset per request. */
    private String errorReason;
    /** SEQ_GAP: the queue's last seq, written after the reason. */
    private long gapLastSeq;

    // Request readers: flyweights over the current frame, reused (event-loop confined like the handler).
    private final SequencedPrefix prefix = new SequencedPrefix();
    private final PutCodec putRequest = new PutCodec();
    private final ReplaceCodec replaceRequest = new ReplaceCodec();
    private final ReadCodec readRequest = new ReadCodec();
    private final RebaseCodec rebaseRequest = new RebaseCodec();
    private final OpenCodec openRequest = new OpenCodec();

    private Status applyToQueue(Channel ch, Opcode op, long seq, int handleId, int flags, QueueHandle h, ByteBuf in,
                                ByteBuf out) {
        QueueState q = h.queue();
        switch (op) {
            case PUT -> {
                PutCodec r = putRequest.wrap(in, flags);
                Status s = server.store.put(q, r.id(), r.priority(), r.notBefore(), r.state(), r.body(),
                        r.replaceExisting(), r.position());
                if (s != Status.OK) {
                    return s;
                }
                PutCodec.writeOk(out, seq, q.txn(), server.store.lastPutPosition());
                return Status.OK;
            }
            case DELETE -> {
                return okIfOk(server.store.delete(q, DeleteCodec.readRequest(in)), op, seq, q, out);
            }
            case REPLACE -> {
                ReplaceCodec r = replaceRequest.wrap(in);
                return okIfOk(server.store.replace(q, r.id(), r.priority(), r.notBefore(), r.state()), op, seq, q, out);
            }
            case GET -> {
                byte[] id = GetCodec.readRequest(in);
                int start = GetCodec.beginOk(out, seq, q.txn());
                Status s = server.store.get(q, id, out, visibleLimit(h, flags));
                if (s == Status.OK) {
                    Frames.finishFrame(out, start);
                }
                return s;
            }
            case READ -> {
                ReadCodec r = readRequest.wrap(in);
                int start = ReadCodec.beginOk(out, seq, q.txn());
                Status s = server.store.read(q, r.fromPosition(), r.maxCount(), r.maxBytes(), r.readyBefore(), out,
                        visibleLimit(h, flags));
                if (s == Status.OK) {
                    Frames.finishFrame(out, start);
                }
                return s;
            }
            case STAT -> {
                StatCodec.writeOk(out, seq, q.txn(), q.size(), q.bytes(), q.firstPosition(), q.nextPosition(),
                        q.earliestNotBefore(), q.epoch(), q.owner(), queueFlags(q), q.lastSeq(), q.digest(),
                        server.store.storeId());
                return Status.OK;
            }
            case REBASE -> {
                RebaseCodec r = rebaseRequest.wrap(in, flags);
                if (r.conditional()) {
                    if (q.lastSeq() == r.lastSeq() && q.digest() == r.digest()) {
                        return okIfOk(Status.OK, op, seq, q, out); // a repeat: already aligned
                    }
                    if (q.lastSeq() != r.lastSeq() || q.digest() != r.expectedDigest()) {
                        errorReason = "the copy is at seq " + q.lastSeq() + " digest " + q.digest() + ", not at seq "
                                + r.lastSeq() + " digest " + r.expectedDigest();
                        return Status.NOT_FOUND;
                    }
                }
                return okIfOk(server.store.rebase(q, r.lastSeq(), r.digest(), r.nextPosition()), op, seq, q, out);
            }
            case CLEAR -> {
                return okIfOk(server.store.clear(q), op, seq, q, out);
            }
            case COMMIT -> {
                return okIfOk(server.store.commitPoint(q, CommitCodec.readRequest(in)), op, seq, q, out);
            }
            case DROP -> {
                Status s = server.store.drop(q);
                if (s == Status.OK) {
                    server.writers.forget(q.name());
                    server.metrics.queueDropped(q.name());
                    handles.remove(handleId);
                }
                return okIfOk(s, op, seq, q, out);
            }
            case CLOSE -> {
                handles.remove(handleId);
                if (h.mode() == OpenMode.WRITE) {
                    server.writers.release(q.name(), ch);
                }
                return okIfOk(Status.OK, op, seq, q, out);
            }
            default -> {
                return Status.UNKNOWN_OPCODE;
            }
        }
    }

    private Status open(Channel ch, long seq, ByteBuf in, ByteBuf out) {
        OpenCodec r = openRequest.wrap(in);
        String name = r.queue();
        OpenMode mode = r.mode();
        long epoch = r.epoch();
        String owner = r.owner();
        if (r.expectedStore() != 0 && r.expectedStore() != server.store.storeId()) {
            errorReason = "expected store " + Long.toHexString(r.expectedStore()) + ", this server's store is "
                    + Long.toHexString(server.store.storeId()) + " (it lost its disk): nothing opened, created or fenced";
            return Status.STORE_CHANGED;
        }
        QueueState q = server.store.queue(name);
        if (q == null) {
            if (mode == OpenMode.READ) {
                return Status.NO_SUCH_QUEUE;
            }
            q = server.store.create(name, r.maxMessages(), r.maxBytes());
            if (q == null) {
                return Status.DISK_FULL;
            }
            server.metrics.queueCreated(q);
        }
        if (mode == OpenMode.WRITE) {
            if (epoch < q.epoch()) {
                return Status.STALE_EPOCH;
            }
            Channel holder = server.writers.writer(name);
            if (epoch == q.epoch() && holder != null && holder != ch) {
                return Status.QUEUE_LOCKED;
            }
            if (epoch > q.epoch() || !owner.equals(q.owner())) {
                Status s = server.store.setOwner(q, epoch, owner);
                if (s != Status.OK) {
                    return s;
                }
            }
            server.writers.claim(name, ch);
        }
        int handleId = nextHandle++;
        handles.put(handleId, new QueueHandle(q, mode, epoch, server.metrics.queueTally(q.name())));
        OpenCodec.writeOk(out, seq, q.txn(), handleId, q.epoch(), q.size(), queueFlags(q), q.lastSeq(), q.digest(),
                server.store.storeId());
        return Status.OK;
    }

    /** The u8 queue flags that end OPEN and STAT answers (see the protocol's package doc). */
    private static int queueFlags(QueueState q) {
        return q.damaged() ? QueueFlags.DAMAGED : 0;
    }

    private static Status okIfOk(Status s, Opcode op, long seq, QueueState q, ByteBuf out) {
        if (s == Status.OK) {
            Frames.writeEmptyOk(out, op.code(), seq, q.txn());
        }
        return s;
    }
}
