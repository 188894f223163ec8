package org.jameskvs.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A TCP forwarder in front of a KVS server (one network path) with the faults a path can have:
 * <ul>
 * <li><b>frozen</b>: bytes stop flowing both ways but connections stay open, like a network
 * partition or a SIGSTOPped server (no RST, no FIN). Only heartbeats and request timeouts can tell.</li>
 * <li><b>cut</b>: every connection is closed at once and new ones are closed as soon as accepted,
 * like a cable pulled next to a router that answers with resets: the client sees the loss at once.</li>
 * <li><b>answers delayed</b>: requests flow to the server at once (it applies them) but its answers
 * reach the client only {@code delay} after the server sent them, in order (a delay line).</li>
 * <li><b>slow requests</b>: the client's bytes reach the server at a bounded rate (a slow link:
 * a large frame takes seconds to get through while the server is healthy).</li>
 * </ul>
 * Records the first byte each client sent, to tell what it spoke (0x16 opens a TLS handshake; a
 * KVS frame starts with its length). Test code (the replication's path faults, lane slots).
 */
public final class FreezableProxy implements AutoCloseable {
    /** The end of a connection's answer stream, queued behind the bytes still in the delay line. */
    private static final Chunk END = new Chunk(new byte[0], 0);

    private final ServerSocket server;
    private final int targetPort;
    private volatile boolean frozen;
    private volatile boolean cut;
    private volatile long answerDelayNanos;
    /** Client-to-server bytes per second; 0: no limit. */
    private volatile long requestBytesPerSecond;
    private volatile boolean closed;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Integer> firstClientBytes = new CopyOnWriteArrayList<>();

    public FreezableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        Thread t = new Thread(this::acceptLoop, "proxy-accept-" + targetPort);
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The first byte of each connection's client-to-server stream, in connection order. */
    public List<Integer> firstClientBytes() {
        return List.copyOf(firstClientBytes);
    }

    public void freeze(boolean frozen) {
        this.frozen = frozen;
    }

    /** Cuts the path (closes every connection, refuses new ones) or mends it. */
    public void cut(boolean cut) {
        this.cut = cut;
        if (cut) {
            sockets.forEach(FreezableProxy::closeQuietly);
            sockets.clear();
        }
    }

    /**
     * Answers the server sends from now on reach the client {@code delay} later ({@link Duration#ZERO}
     * ends it; answers already in the delay line keep their time, and later ones queue behind them).
     */
    public void delayAnswers(Duration delay) {
        this.answerDelayNanos = delay.toNanos();
    }

    /** Client-to-server bytes flow at most at this rate from now on (0: no limit). */
    public void limitRequestRate(long bytesPerSecond) {
        this.requestBytesPerSecond = bytesPerSecond;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                if (frozen) {
                    sockets.add(client); // accepted by the kernel anyway; nothing flows
                    continue;
                }
                Socket upstream;
                try {
                    upstream = new Socket("127.0.0.1", targetPort);
                } catch (IOException serverDown) {
                    closeQuietly(client); // as the server itself would refuse it
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pumpRequests(client, upstream);
                pumpAnswers(upstream, client);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pumpRequests(Socket from, Socket to) {
        daemon("proxy-requests", () -> {
            byte[] buf = new byte[64 * 1024];
            boolean first = true;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                while (true) {
                    awaitThaw();
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    if (first && n > 0) {
                        firstClientBytes.add(buf[0] & 0xFF);
                        first = false;
                    }
                    awaitThaw(); // hold what was read: it flows again on thaw
                    long rate = requestBytesPerSecond;
                    if (rate > 0) {
                        Thread.sleep(Math.max(1, n * 1000L / rate));
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
        });
    }

    /** Server to client through a delay line: one thread stamps what the server sent, another delivers it when due. */
    private void pumpAnswers(Socket from, Socket to) {
        BlockingQueue<Chunk> line = new LinkedBlockingQueue<>();
        daemon("proxy-answers-in", () -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream()) {
                while (true) {
                    awaitThaw();
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    line.add(new Chunk(Arrays.copyOf(buf, n), System.nanoTime() + answerDelayNanos));
                }
            } catch (IOException | InterruptedException ignored) {
                // connection ended
            } finally {
                line.add(END);
            }
        });
        daemon("proxy-answers-out", () -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Chunk c = line.take();
                    if (c == END) {
                        break;
                    }
                    long wait;
                    while ((wait = c.due - System.nanoTime()) > 0) {
                        Thread.sleep(Math.max(1, wait / 1_000_000));
                    }
                    awaitThaw();
                    out.write(c.bytes);
                    out.flush();
                }
            } catch (IOException | InterruptedException ignored) {
                // connection ended
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        });
    }

    private void awaitThaw() throws InterruptedException {
        while (frozen && !closed) {
            Thread.sleep(5);
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private record Chunk(byte[] bytes, long due) {
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
