package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.ResponseDescriptor;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A blocking test client that speaks raw frames over a plain socket, independent of the client
 * library, so tests can also send malformed bytes.
 */
final class RawClient implements AutoCloseable {
    final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private long seq = 1;

    RawClient(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    static RawClient authenticated(int port, String password) throws IOException {
        RawClient c = new RawClient(port);
        Response r = c.call(b -> Requests.auth(b, c.nextSeq(), "james", password));
        if (r.status != Status.OK) {
            throw new IllegalStateException("auth failed: " + r.status);
        }
        return c;
    }

    long nextSeq() {
        return seq++;
    }

    /** Sends one request built by the encoder and waits for its response. */
    Response call(Consumer<ByteBuf> encoder) throws IOException {
        send(encoder);
        return receive();
    }

    void send(Consumer<ByteBuf> encoder) throws IOException {
        ByteBuf b = Unpooled.buffer();
        encoder.accept(b);
        sendRaw(ByteBufUtil.getBytes(b));
    }

    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    Response receive() throws IOException {
        int len = in.readInt();
        byte[] frame = new byte[len];
        in.readFully(frame);
        ByteBuf f = Unpooled.wrappedBuffer(frame);
        Response r = new Response(Frames.responseOpcode(f), Frames.responseStatus(f), Frames.responseSequence(f),
                Frames.responseTxn(f), f.skipBytes(ResponseDescriptor.HEADER_SIZE));
        return r;
    }

    /** True when the server closed the connection (reads EOF within the socket timeout). */
    boolean closedByServer() {
        try {
            while (true) {
                in.readByte();
            }
        } catch (EOFException e) {
            return true;
        } catch (IOException e) {
            return e.getMessage() != null && e.getMessage().contains("reset");
        }
    }

    int open(String queue, OpenMode mode, long epoch) throws IOException {
        Response r = call(b -> Requests.open(b, nextSeq(), queue, mode, epoch, 0, 0, "test"));
        if (r.status != Status.OK) {
            throw new IllegalStateException("open " + queue + ": " + r.status + " " + r.reason());
        }
        return r.payload.readInt();
    }

    Response put(int handle, String id, String body) throws IOException {
        return call(b -> Requests.put(b, nextSeq(), handle, id.getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0],
                body.getBytes(StandardCharsets.UTF_8)));
    }

    Response simple(Opcode op, int handle) throws IOException {
        return call(b -> Requests.empty(b, op, nextSeq(), handle));
    }

    /**
     * Reads the whole queue from position 0, at most {@code maxCount} messages ({@code maxBytes}) a
     * READ, each answer asserted OK, and hands every message to {@code each} in position order.
     */
    void readAll(int handle, int maxCount, int maxBytes, Consumer<StoredMessage> each) throws IOException {
        long from = 0;
        while (true) {
            long f = from;
            Response r = call(b -> Requests.read(b, nextSeq(), handle, f, maxCount, maxBytes, 0));
            assertThat(r.status()).isEqualTo(Status.OK);
            ByteBuf p = r.payload();
            from = p.readLong();
            int count = p.readInt();
            if (count == 0) {
                return;
            }
            for (int i = 0; i < count; i++) {
                each.accept(StoredMessage.readRecord(p));
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    record Response(byte opcode, Status status, long sequence, long txn, ByteBuf payload) {
        String reason() {
            ByteBuf p = payload.duplicate();
            return status == Status.OK ? "" : org.jameskvs.protocol.Wire.readString(p);
        }
    }
}
