package org.jameskvs.replication;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder in front of a KVS server that can be frozen: bytes stop flowing both ways but
 * connections stay open, like a network partition or a SIGSTOPped server (no RST, no FIN). Only
 * heartbeats and request timeouts can tell. Records the first byte each client sent, to tell what it
 * spoke (0x16 opens a TLS handshake; a KVS frame starts with its length).
 */
final class FreezableProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private volatile boolean frozen;
    private volatile boolean closed;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Integer> firstClientBytes = new CopyOnWriteArrayList<>();

    FreezableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        Thread t = new Thread(this::acceptLoop, "proxy-accept-" + targetPort);
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** The first byte of each connection's client-to-server stream, in connection order. */
    List<Integer> firstClientBytes() {
        return List.copyOf(firstClientBytes);
    }

    void freeze(boolean frozen) {
        this.frozen = frozen;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (frozen) {
                    sockets.add(client); // accepted by the kernel anyway; nothing flows
                    continue;
                }
                Socket upstream = new Socket("127.0.0.1", targetPort);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, firstClientBytes);
                pump(upstream, client, null);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    /** @param firstBytes where to note the first byte read, or null */
    private void pump(Socket from, Socket to, List<Integer> firstBytes) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            boolean first = firstBytes != null;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                while (true) {
                    while (frozen && !closed) {
                        Thread.sleep(5);
                    }
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    if (first && n > 0) {
                        firstBytes.add(buf[0] & 0xFF);
                        first = false;
                    }
                    while (frozen && !closed) {
                        Thread.sleep(5); // hold what was read: it flows again on thaw
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException ignored) {
                // connection ended
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        sockets.forEach(FreezableProxy::closeQuietly);
    }

    private static void closeQuietly(ServerSocket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
