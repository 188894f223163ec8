package org.jameskvs.client;

import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.Wire;

import java.util.concurrent.CompletableFuture;

/**
 * {@link KvsQueue} bound to the client: the server handle is only meaningful on the connection that
 * opened it, so the handle and its connection are swapped together, and a call made while the queue
 * waits to be re-opened on a new connection fails fast with {@code CONNECTION_LOST}.
 */
final class QueueHandle implements KvsQueue {
    private static final byte[] EMPTY = new byte[0];
    /** Frame header plus the fixed fields of the largest request, so a hint is never too small. */
    private static final int HEADER_HINT = 64;

    /** Either a live handle on a connection, or none (waiting for a re-open), or a final failure. */
    private record Binding(ClientConnection connection, int handle, Status failure, String reason) {
    }

    private final KvsClient client;
    private final String name;
    private final OpenOptions options;
    private volatile Binding binding;
    private volatile long store;

    QueueHandle(KvsClient client, String name, OpenOptions options, ClientConnection connection, int handle, long store) {
        this.client = client;
        this.name = name;
        this.options = options;
        this.binding = new Binding(connection, handle, null, null);
        this.store = store;
    }

    /** The server's store id that answered the latest OPEN of this handle (0: not told). */
    long store() {
        return store;
    }

    @Override
    public String name() {
        return name;
    }

    OpenOptions options() {
        return options;
    }

    /** The server handle in use, 0 when none. */
    int serverHandle() {
        return binding.handle;
    }

    /** Not closed, dropped or fenced: it should be re-opened after a reconnect. */
    boolean isOpen() {
        return binding.failure == null;
    }

    /** @return false when the queue was closed meanwhile: the caller then releases the new handle */
    synchronized boolean bind(ClientConnection connection, int handle, long store) {
        if (binding.failure != null) {
            return false;
        }
        binding = new Binding(connection, handle, null, null);
        if (store != 0) {
            this.store = store;
        }
        return true;
    }

    /** Ends the queue for good: every later call completes at once with this status. */
    void fail(Status status, String reason) {
        end(status, reason);
    }

    /** @return the binding before; unchanged when the queue had already ended */
    private synchronized Binding end(Status status, String reason) {
        Binding before = binding;
        if (before.failure == null) {
            binding = new Binding(null, 0, status, reason);
        }
        return before;
    }

    @Override
    public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return put(0, id, priority, notBefore, state, body);
    }

    @Override
    public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return put(RequestDescriptor.FLAG_REPLACE_EXISTING, id, priority, notBefore, state, body);
    }

    private CompletableFuture<Ack> put(int flags, byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        String bad = checkId(id) != null ? checkId(id) : checkPriority(priority);
        if (bad == null && body == null) {
            bad = "body is null";
        }
        if (bad != null) {
            return Request.failed(ResultDecoders.ACK_WITH_VALUE, Status.BAD_REQUEST, bad);
        }
        byte[] st = state == null ? EMPTY : state;
        Binding b = binding;
        CompletableFuture<Ack> refused = refusal(b, ResultDecoders.ACK_WITH_VALUE);
        if (refused != null) {
            return refused;
        }
        return b.connection.submit(new PutRequest(b.handle, client.deadline(), flags, id, priority, notBefore, st, body,
                HEADER_HINT + id.length + st.length + body.length));
    }

    @Override
    public CompletableFuture<Ack> delete(byte[] id) {
        String bad = checkId(id);
        if (bad != null) {
            return Request.failed(ResultDecoders.ACK, Status.BAD_REQUEST, bad);
        }
        return callWithId(Opcode.DELETE, id, ResultDecoders.ACK);
    }

    @Override
    public CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
        String bad = checkId(id) != null ? checkId(id) : checkPriority(priority);
        if (bad != null) {
            return Request.failed(ResultDecoders.ACK, Status.BAD_REQUEST, bad);
        }
        byte[] st = state == null ? EMPTY : state;
        return call(Opcode.REPLACE, HEADER_HINT + id.length + st.length,
                (out, seq, h) -> Requests.replace(out, seq, h, id, priority, notBefore, st), ResultDecoders.ACK);
    }

    @Override
    public CompletableFuture<GetResult> get(byte[] id) {
        String bad = checkId(id);
        if (bad != null) {
            return Request.failed(ResultDecoders.GET, Status.BAD_REQUEST, bad);
        }
        return callWithId(Opcode.GET, id, ResultDecoders.GET);
    }

    @Override
    public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return call(Opcode.READ, HEADER_HINT,
                (out, seq, h) -> Requests.read(out, seq, h, fromPosition, maxCount, maxBytes, readyBefore), ResultDecoders.READ);
    }

    @Override
    public CompletableFuture<ReadResult> readUncommitted(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return call(Opcode.READ, HEADER_HINT, (out, seq, h) -> Requests.readUncommitted(out, seq, h, fromPosition,
                maxCount, maxBytes, readyBefore), ResultDecoders.READ);
    }

    @Override
    public CompletableFuture<QueueStat> stat() {
        return call(Opcode.STAT, HEADER_HINT, (out, seq, h) -> Requests.empty(out, Opcode.STAT, seq, h), ResultDecoders.STAT);
    }

    @Override
    public CompletableFuture<Ack> sequenced(long queueSeq, Opcode kind, boolean replacing, byte[] id, int priority,
                                           long notBefore, byte[] state, byte[] body) {
        return sequenced(queueSeq, -1, kind, replacing, id, priority, notBefore, state, body);
    }

    @Override
    public CompletableFuture<Ack> commit(long committed) {
        return call(Opcode.COMMIT, HEADER_HINT + 8, (out, seq, h) -> Requests.commit(out, seq, h, committed),
                ResultDecoders.ACK);
    }

    @Override
    public CompletableFuture<Ack> sequenced(long queueSeq, long committed, Opcode kind, boolean replacing, byte[] id,
                                           int priority, long notBefore, byte[] state, byte[] body) {
        byte[] st = state == null ? EMPTY : state;
        switch (kind) {
            case PUT -> {
                byte[] b = body == null ? EMPTY : body;
                int flags = replacing ? RequestDescriptor.FLAG_REPLACE_EXISTING : 0;
                return call(kind, HEADER_HINT + 16 + id.length + st.length + b.length, (out, seq, h) ->
                        Requests.putSequenced(out, seq, h, flags, queueSeq, committed, id, priority, notBefore, st, b),
                        ResultDecoders.ACK_WITH_VALUE);
            }
            case DELETE -> {
                return call(kind, HEADER_HINT + 16 + id.length,
                        (out, seq, h) -> Requests.deleteSequenced(out, seq, h, queueSeq, committed, id), ResultDecoders.ACK);
            }
            case REPLACE -> {
                return call(kind, HEADER_HINT + 16 + id.length + st.length, (out, seq, h) ->
                        Requests.replaceSequenced(out, seq, h, queueSeq, committed, id, priority, notBefore, st), ResultDecoders.ACK);
            }
            case CLEAR -> {
                return call(kind, HEADER_HINT + 16,
                        (out, seq, h) -> Requests.clearSequenced(out, seq, h, queueSeq, committed), ResultDecoders.ACK);
            }
            default -> {
                return Request.failed(ResultDecoders.ACK, Status.BAD_REQUEST, kind + " is not a sequenced mutation");
            }
        }
    }

    @Override
    public CompletableFuture<Ack> rebase(long lastSeq, long digest, long nextPosition) {
        return call(Opcode.REBASE, HEADER_HINT, (out, seq, h) -> Requests.rebase(out, seq, h, lastSeq, digest,
                nextPosition), ResultDecoders.ACK);
    }

    @Override
    public CompletableFuture<Ack> rebaseIfAt(long lastSeq, long expectedDigest, long digest) {
        return call(Opcode.REBASE, HEADER_HINT, (out, seq, h) -> Requests.rebaseIfAt(out, seq, h, lastSeq, expectedDigest,
                digest), ResultDecoders.ACK);
    }

    @Override
    public CompletableFuture<Ack> putAt(long position, boolean replacing, byte[] id, int priority, long notBefore,
                                        byte[] state, byte[] body) {
        String bad = checkId(id) != null ? checkId(id) : checkPriority(priority);
        if (bad == null && position <= 0) {
            bad = "position must be >= 1, got " + position;
        }
        if (bad != null) {
            return Request.failed(ResultDecoders.ACK_WITH_VALUE, Status.BAD_REQUEST, bad);
        }
        byte[] st = state == null ? EMPTY : state;
        byte[] b = body == null ? EMPTY : body;
        int flags = replacing ? RequestDescriptor.FLAG_REPLACE_EXISTING : 0;
        return call(Opcode.PUT, HEADER_HINT + 8 + id.length + st.length + b.length, (out, seq, h) ->
                Requests.putAt(out, seq, h, flags, position, id, priority, notBefore, st, b), ResultDecoders.ACK_WITH_VALUE);
    }

    @Override
    public CompletableFuture<Ack> clear() {
        return call(Opcode.CLEAR, HEADER_HINT, (out, seq, h) -> Requests.empty(out, Opcode.CLEAR, seq, h), ResultDecoders.ACK);
    }

    /** After an OK the queue is gone: this object is closed and will not be re-opened on reconnect. */
    @Override
    public CompletableFuture<Ack> drop() {
        return call(Opcode.DROP, HEADER_HINT, (out, seq, h) -> Requests.empty(out, Opcode.DROP, seq, h), ResultDecoders.ACK)
                .thenApply(ack -> {
                    if (ack.isOk()) {
                        fail(Status.BAD_HANDLE, "queue dropped");
                        client.forget(this);
                    }
                    return ack;
                });
    }

    /** Fire-and-forget {@link #closeAsync()}. */
    @Override
    public void close() {
        closeAsync();
    }

    /**
     * Releases the handle; later calls complete with {@code BAD_HANDLE}. Without a live connection
     * nothing is sent (the server released the handle with the connection) and the Ack says
     * {@code CONNECTION_LOST}.
     */
    public CompletableFuture<Ack> closeAsync() {
        Binding before = end(Status.BAD_HANDLE, "queue closed");
        client.forget(this);
        if (before.failure != null) {
            return Request.failed(ResultDecoders.ACK, before.failure, before.reason);
        }
        ClientConnection c = before.connection;
        if (c == null || !c.isReady()) {
            return Request.failed(ResultDecoders.ACK, Status.CONNECTION_LOST, "not connected; nothing to release");
        }
        return client.releaseHandle(c, before.handle);
    }

    private <T> CompletableFuture<T> call(Opcode op, int sizeHint, Request.Encoder encoder, ResultDecoder<T> decoder) {
        Binding b = binding;
        CompletableFuture<T> refused = refusal(b, decoder);
        if (refused != null) {
            return refused;
        }
        return b.connection.submit(new Request<>(op, b.handle, sizeHint, client.deadline(), encoder, decoder));
    }

    private <T> CompletableFuture<T> callWithId(Opcode op, byte[] id, ResultDecoder<T> decoder) {
        Binding b = binding;
        CompletableFuture<T> refused = refusal(b, decoder);
        if (refused != null) {
            return refused;
        }
        return b.connection.submit(new IdRequest<>(op, b.handle, client.deadline(), id, HEADER_HINT + id.length, decoder));
    }

    /** @return the failed result when calls cannot be sent on this binding now, else null */
    private static <T> CompletableFuture<T> refusal(Binding b, ResultDecoder<T> decoder) {
        if (b.failure != null) {
            return Request.failed(decoder, b.failure, b.reason);
        }
        ClientConnection c = b.connection;
        if (c == null || !c.isReady()) {
            return Request.failed(decoder, Status.CONNECTION_LOST, "not connected (reconnecting)");
        }
        return null;
    }

    private static String checkId(byte[] id) {
        if (id == null || id.length == 0 || id.length > Wire.MAX_ID_LENGTH) {
            return "message id must be 1.." + Wire.MAX_ID_LENGTH + " bytes";
        }
        return null;
    }

    private static String checkPriority(int priority) {
        return priority < 0 || priority > 255 ? "priority must be 0..255" : null;
    }

    @Override
    public String toString() {
        Binding b = binding;
        return "KvsQueue{" + name + ", " + options.mode() + ", handle=" + b.handle
                + (b.failure != null ? ", " + b.failure : b.connection == null || b.connection.isClosed() ? ", reconnecting" : "") + "}";
    }
}
