package org.jameskvs.testkit.smtp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A minimal SMTP server on 127.0.0.1 that accepts every message and records, per message, the value of
 * one header ({@code Message-ID} unless told otherwise), so tests can check that each mail arrived
 * exactly once. It stores nothing else.
 *
 * <p>As a program: {@code SmtpSink <port> [stats-file] [header]} runs until killed and rewrites
 * {@code stats-file} every 100 ms with {@code messages=N distinct=N duplicates=N}.
 */
public final class SmtpSink implements AutoCloseable {
    public static final String DEFAULT_HEADER = "Message-ID";

    private final ServerSocket serverSocket;
    private final String header;
    private final ExecutorService connections = Executors.newCachedThreadPool(daemon("smtp-sink-connection"));
    private final Map<String, AtomicInteger> countsById = new ConcurrentHashMap<>();
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong withoutHeader = new AtomicLong();
    private final AtomicLong deferred = new AtomicLong();
    private final Map<String, Long> firstReceivedNanos = new ConcurrentHashMap<>();
    private final Object holdLock = new Object();
    private volatile boolean deferring;
    private volatile boolean holding;
    private volatile boolean closed;

    private SmtpSink(ServerSocket serverSocket, String header) {
        this.serverSocket = serverSocket;
        this.header = header;
    }

    /** Starts listening on 127.0.0.1:{@code port} (0 = any free port). */
    public static SmtpSink start(int port, String header) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        SmtpSink sink = new SmtpSink(socket, header);
        Thread acceptor = daemon("smtp-sink-accept").newThread(sink::acceptLoop);
        acceptor.start();
        return sink;
    }

    public int port() {
        return serverSocket.getLocalPort();
    }

    /** Messages accepted (DATA answered 250), duplicates included. */
    public long messages() {
        return messages.get();
    }

    /** Distinct header values seen. */
    public int distinct() {
        return countsById.size();
    }

    /** Messages beyond the first for their header value. */
    public long duplicates() {
        return countsById.values().stream().mapToLong(c -> c.get() - 1L).sum();
    }

    /** Messages that had no such header. */
    public long withoutHeader() {
        return withoutHeader.get();
    }

    /**
     * While on, every message is answered {@code 451} at the end of DATA and not recorded: a receiving
     * server that is temporarily unavailable, so the sender must retry later.
     */
    public void deferAll(boolean on) {
        deferring = on;
    }

    /**
     * While on, every new connection is accepted but not greeted until it goes off: a receiving server
     * that is slow to answer. A sender's delivery threads then wait in their sessions, so mail piles up
     * in its queue, ready (not deferred: no retry counted against it).
     */
    public void holdAll(boolean on) {
        synchronized (holdLock) {
            holding = on;
            holdLock.notifyAll();
        }
    }

    /** {@link System#nanoTime()} when a message with this header value was first received; null if never. */
    public Long firstReceivedNanos(String headerValue) {
        return firstReceivedNanos.get(headerValue);
    }

    /** Messages answered 451 by {@link #deferAll(boolean)}. */
    public long deferred() {
        return deferred.get();
    }

    /** How many times a message with this header value was received. */
    public int count(String headerValue) {
        AtomicInteger c = countsById.get(headerValue);
        return c == null ? 0 : c.get();
    }

    /**
     * Waits (bounded) until every one of {@code headerValues} was received at least once.
     * @return the ones still missing at the deadline (empty: all arrived)
     */
    public java.util.List<String> awaitAll(java.util.Collection<String> headerValues, java.time.Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        java.util.List<String> missing = java.util.List.copyOf(headerValues);
        while (true) {
            missing = missing.stream().filter(id -> count(id) == 0).toList();
            if (missing.isEmpty() || System.nanoTime() - deadline >= 0) {
                return missing;
            }
            Thread.sleep(200);
        }
    }

    public Map<String, Integer> countsById() {
        Map<String, Integer> copy = new java.util.TreeMap<>();
        countsById.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }

    public String statsLine() {
        return "messages=" + messages() + " distinct=" + distinct() + " duplicates=" + duplicates()
            + " withoutHeader=" + withoutHeader();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket socket = serverSocket.accept();
                connections.execute(() -> serve(socket));
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("smtp-sink: accept failed: " + e);
                }
            }
        }
    }

    private void serve(Socket socket) {
        try (socket;
             BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
             OutputStream out = socket.getOutputStream()) {
            socket.setSoTimeout(120_000);
            // Replies to pipelined commands (RFC 2920: MAIL, RCPT, DATA in one write) are several small
            // writes in a row: without this, Nagle holds each behind the client's delayed ACK, about 40 ms
            // per transaction, which a real next hop does not add (as in DomainSmtpTarget).
            socket.setTcpNoDelay(true);
            awaitUnheld();
            reply(out, "220 127.0.0.1 kvs smtp sink");
            String line;
            while ((line = in.readLine()) != null) {
                String verb = line.length() < 4 ? line.toUpperCase(Locale.ROOT) : line.substring(0, 4).toUpperCase(Locale.ROOT);
                switch (verb) {
                    case "EHLO" -> reply(out, "250-127.0.0.1\r\n250-PIPELINING\r\n250 8BITMIME");
                    case "HELO", "MAIL", "RCPT", "RSET", "NOOP" -> reply(out, "250 OK");
                    case "DATA" -> {
                        reply(out, "354 end with <CRLF>.<CRLF>");
                        if (readMessage(in)) {
                            reply(out, "250 OK queued");
                        } else {
                            reply(out, "451 temporarily unavailable, try again later");
                        }
                    }
                    case "QUIT" -> {
                        reply(out, "221 bye");
                        return;
                    }
                    default -> reply(out, "502 command not implemented");
                }
            }
        } catch (SocketException e) {
            // peer went away
        } catch (IOException e) {
            if (!closed) {
                System.err.println("smtp-sink: connection failed: " + e);
            }
        }
    }

    private void awaitUnheld() throws IOException {
        synchronized (holdLock) {
            while (holding && !closed) {
                try {
                    holdLock.wait(1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while held");
                }
            }
        }
    }

    /** Reads DATA up to the final dot; records it and returns true, or returns false when deferring. */
    private boolean readMessage(BufferedReader in) throws IOException {
        String value = null;
        boolean inHeaders = true;
        String prefix = header.toLowerCase(Locale.ROOT) + ":";
        String line;
        while ((line = in.readLine()) != null && !line.equals(".")) {
            if (inHeaders) {
                if (line.isEmpty()) {
                    inHeaders = false;
                } else if (value == null && line.toLowerCase(Locale.ROOT).startsWith(prefix)) {
                    value = line.substring(prefix.length()).trim();
                }
            }
        }
        if (line == null) {
            throw new IOException("connection closed inside DATA");
        }
        if (deferring) {
            deferred.incrementAndGet();
            return false;
        }
        messages.incrementAndGet();
        if (value == null) {
            withoutHeader.incrementAndGet();
        } else {
            firstReceivedNanos.putIfAbsent(value, System.nanoTime());
            countsById.computeIfAbsent(value, k -> new AtomicInteger()).incrementAndGet();
        }
        return true;
    }

    private static void reply(OutputStream out, String text) throws IOException {
        out.write((text + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        holdAll(false);
        serverSocket.close();
        connections.shutdownNow();
        try {
            connections.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread t = new Thread(runnable, name);
            t.setDaemon(true);
            return t;
        };
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: SmtpSink <port> [stats-file] [header]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        Path stats = args.length > 1 ? Path.of(args[1]) : null;
        String header = args.length > 2 ? args[2] : DEFAULT_HEADER;
        SmtpSink sink = start(port, header);
        System.out.println("smtp-sink listening on 127.0.0.1:" + sink.port() + " recording " + header);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            writeStats(sink, stats);
            System.out.println("smtp-sink: " + sink.statsLine());
        }));
        while (true) {
            writeStats(sink, stats);
            Thread.sleep(100);
        }
    }

    private static void writeStats(SmtpSink sink, Path stats) {
        if (stats == null) {
            return;
        }
        try {
            Path tmp = stats.resolveSibling(stats.getFileName() + ".tmp");
            Files.writeString(tmp, sink.statsLine() + "\n");
            Files.move(tmp, stats, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
