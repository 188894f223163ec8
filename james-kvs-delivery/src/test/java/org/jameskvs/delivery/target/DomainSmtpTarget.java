package org.jameskvs.delivery.target;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An SMTP target for many test domains at once: each domain has its own loopback address
 * (127.0.0.2, 127.0.0.3, ...; the whole 127/8 block is loopback on Linux), all on one port, and its
 * own {@link Behaviour}, changeable while running. Per domain it counts the mails accepted (and their
 * distinct Message-IDs, to see duplicates), the connections, the most connections open at once, and
 * the transactions a client pipelined (the target offers PIPELINING); it keeps the connections open
 * over time (for the reports' charts), and refuses chosen recipients with their own reply
 * ({@link Domain#refuseRecipient}) while accepting the others.
 */
public final class DomainSmtpTarget implements AutoCloseable {
    private static final Pattern MESSAGE_ID = Pattern.compile("(?im)^Message-ID:\\s*(\\S+)");

    /** One domain's listener and counters. */
    public static final class Domain {
        private final String name;
        private final InetAddress address;
        private final ServerSocket server;
        private volatile Behaviour behaviour;
        private final AtomicInteger open = new AtomicInteger();
        private final AtomicInteger maxOpen = new AtomicInteger();
        private final AtomicLong connections = new AtomicLong();
        private final AtomicLong accepted = new AtomicLong();
        private final AtomicLong refused = new AtomicLong();
        private final AtomicLong pipelined = new AtomicLong();
        private final AtomicLong refusedRcpts = new AtomicLong();
        private final Set<String> messageIds = ConcurrentHashMap.newKeySet();
        private final Map<String, Long> firstArrivalMillis = new ConcurrentHashMap<>();
        private final Map<String, String> recipientReplies = new ConcurrentHashMap<>();
        /** (epoch ms, connections open after it) at each open and close, the first MAX_TIMELINE changes. */
        private final java.util.Queue<long[]> timeline = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final AtomicInteger timelineSize = new AtomicInteger();

        private Domain(String name, InetAddress address, ServerSocket server, Behaviour behaviour) {
            this.name = name;
            this.address = address;
            this.server = server;
            this.behaviour = behaviour;
        }

        public String name() {
            return name;
        }

        public InetAddress address() {
            return address;
        }

        public void behave(Behaviour behaviour) {
            this.behaviour = behaviour;
        }

        /**
         * RCPT to {@code address} (case-insensitive) answered {@code reply} (a full reply line, e.g.
         * {@code 550 5.1.1 no such user}), whatever the behaviour; the other recipients as the behaviour says.
         */
        public void refuseRecipient(String address, String reply) {
            recipientReplies.put(address.toLowerCase(java.util.Locale.ROOT), reply);
        }

        /**
         * The connections open over time: (epoch ms, connections open from then on) at each open and
         * close, in order, the first MAX_TIMELINE changes.
         */
        public List<long[]> openConnectionsTimeline() {
            List<long[]> changes = new ArrayList<>(timeline);
            changes.sort(java.util.Comparator.comparingLong(c -> c[0]));
            return changes;
        }

        /** When (epoch ms) each connection was opened, in order (the first MAX_TIMELINE changes' opens). */
        public List<Long> connectionOpenTimes() {
            List<Long> opens = new ArrayList<>();
            long previous = 0;
            for (long[] change : openConnectionsTimeline()) {
                if (change[1] > previous) {
                    opens.add(change[0]);
                }
                previous = change[1];
            }
            return opens;
        }

        private void recordOpen(int openNow) {
            if (timelineSize.incrementAndGet() <= MAX_TIMELINE) {
                timeline.add(new long[] {System.currentTimeMillis(), openNow});
            }
        }

        /** Mails answered 250 at the end of DATA (duplicates included). */
        public long accepted() {
            return accepted.get();
        }

        public int distinctMessageIds() {
            return messageIds.size();
        }

        public Set<String> messageIds() {
            return Set.copyOf(messageIds);
        }

        /** When (epoch ms) each Message-ID was first accepted. */
        public Map<String, Long> arrivals() {
            return Map.copyOf(firstArrivalMillis);
        }

        /** Connections accepted at TCP level so far. */
        public long connections() {
            return connections.get();
        }

        /** Connections answered 421 (refusing behaviour or over the connection limit). */
        public long refused() {
            return refused.get();
        }

        /**
         * Transactions whose MAIL command came with the next command already sent behind it (the client
         * did not wait for the reply: PIPELINING, which this target offers in its EHLO reply).
         */
        public long pipelinedTransactions() {
            return pipelined.get();
        }

        /** RCPT commands answered other than 250 (the {@code rcptReply} behaviour). */
        public long refusedRecipients() {
            return refusedRcpts.get();
        }

        /** The most connections open at once so far. */
        public int maxConcurrentConnections() {
            return maxOpen.get();
        }

        public int openConnections() {
            return open.get();
        }
    }

    /** Open/close changes kept per domain for {@link Domain#openConnectionsTimeline()}. */
    public static final int MAX_TIMELINE = 200_000;

    private final int port;
    private final Map<String, Domain> domains;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "domain-smtp-target");
        t.setDaemon(true);
        return t;
    });
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private DomainSmtpTarget(int port, Map<String, Domain> domains) {
        this.port = port;
        this.domains = domains;
    }

    /** Listens for each domain (in order) on 127.0.0.2, 127.0.0.3, ... at one free port. */
    public static DomainSmtpTarget start(Map<String, Behaviour> behaviours) throws IOException {
        if (behaviours.size() > 250 * 250) {
            throw new IllegalArgumentException("too many domains for 127.0.x.y addresses: " + behaviours.size());
        }
        Map<String, Domain> domains = new LinkedHashMap<>();
        int port = 0;
        int index = 0;
        try {
            for (Map.Entry<String, Behaviour> entry : behaviours.entrySet()) {
                InetAddress address = addressOf(index++);
                ServerSocket server = new ServerSocket();
                server.setReuseAddress(true);
                server.bind(new InetSocketAddress(address, port), 100);
                port = server.getLocalPort();
                domains.put(entry.getKey(), new Domain(entry.getKey(), address, server, entry.getValue()));
            }
        } catch (IOException e) {
            domains.values().forEach(d -> closeQuietly(d.server));
            throw e;
        }
        DomainSmtpTarget target = new DomainSmtpTarget(port, domains);
        domains.values().forEach(domain -> target.threads.execute(() -> target.acceptLoop(domain)));
        return target;
    }

    /** 127.0.(index / 250).(index % 250 + 2): two loopback addresses never shared by two domains. */
    static InetAddress addressOf(int index) throws IOException {
        return InetAddress.getByAddress(new byte[] {127, 0, (byte) (index / 250), (byte) (index % 250 + 2)});
    }

    public int port() {
        return port;
    }

    public Domain domain(String name) {
        Domain domain = domains.get(name);
        if (domain == null) {
            throw new IllegalArgumentException("no test domain " + name);
        }
        return domain;
    }

    public List<Domain> domains() {
        return new ArrayList<>(domains.values());
    }

    /** The zone: domain = its address, one line each (what the test DNS service reads). */
    public String zone() {
        StringBuilder zone = new StringBuilder();
        domains.values().forEach(d -> zone.append(d.name).append('=').append(d.address.getHostAddress()).append('\n'));
        return zone.toString();
    }

    private void acceptLoop(Domain domain) {
        while (!closed) {
            try {
                Socket socket = domain.server.accept();
                // Replies to pipelined commands are several small writes in a row: without this, Nagle
                // holds each behind the client's delayed ACK (about 40 ms per transaction).
                socket.setTcpNoDelay(true);
                sockets.add(socket);
                threads.execute(() -> serve(domain, socket));
            } catch (IOException e) {
                if (!closed) {
                    sleepQuietly(10);
                }
            }
        }
    }

    private void serve(Domain domain, Socket socket) {
        domain.connections.incrementAndGet();
        int open;
        synchronized (domain.timeline) { // the count and its timestamp in the same order as the changes
            open = domain.open.incrementAndGet();
            domain.recordOpen(open);
        }
        domain.maxOpen.accumulateAndGet(open, Math::max);
        // A connection stops counting as open before its last reply (421, 221) is written: the client may
        // open the next one as soon as it reads that reply, and must not be seen as over its limit.
        java.util.concurrent.atomic.AtomicBoolean counted = new java.util.concurrent.atomic.AtomicBoolean(true);
        Runnable leave = () -> {
            if (counted.getAndSet(false)) {
                synchronized (domain.timeline) {
                    domain.recordOpen(domain.open.decrementAndGet());
                }
            }
        };
        try (socket) {
            Behaviour behaviour = domain.behaviour;
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            if (behaviour.kind() == Behaviour.Kind.REFUSE_421 || open > behaviour.maxConnections()) {
                domain.refused.incrementAndGet();
                leave.run();
                reply(out, "421 4.7.0 " + domain.name + " too busy, try later");
                return;
            }
            if (behaviour.kind() == Behaviour.Kind.STALL_GREETING) {
                while (!closed && in.read() >= 0) {
                    // no greeting: hold the connection until the client gives up
                }
                return;
            }
            reply(out, "220 " + domain.name + " test target ready");
            session(domain, behaviour, in, out, leave);
        } catch (IOException e) {
            // the client went away
        } finally {
            leave.run();
            sockets.remove(socket);
        }
    }

    private void session(Domain domain, Behaviour behaviour, InputStream in, OutputStream out, Runnable leave) throws IOException {
        int recipients = 0; // accepted in the current transaction
        while (true) {
            String line = readLine(in);
            if (line == null) {
                return;
            }
            String command = line.length() >= 4 ? line.substring(0, 4).toUpperCase(java.util.Locale.ROOT) : line.toUpperCase(java.util.Locale.ROOT);
            switch (command) {
                case "EHLO" -> reply(out, "250-" + domain.name + (behaviour.pipelining() ? "\r\n250-PIPELINING" : "") + "\r\n250 8BITMIME");
                case "MAIL" -> {
                    if (in.available() > 0) {
                        domain.pipelined.incrementAndGet();
                    }
                    recipients = 0;
                    reply(out, "250 OK");
                }
                case "RCPT" -> {
                    Behaviour now = domain.behaviour;
                    String own = domain.recipientReplies.get(addressOf(line));
                    if (own != null) {
                        domain.refusedRcpts.incrementAndGet();
                        reply(out, own);
                    } else if (now.kind() == Behaviour.Kind.RCPT_REPLY && !now.rcptReply().startsWith("2")) {
                        domain.refusedRcpts.incrementAndGet();
                        reply(out, now.rcptReply());
                    } else {
                        recipients++;
                        reply(out, "250 OK");
                    }
                }
                case "HELO", "RSET", "NOOP" -> {
                    recipients = 0;
                    reply(out, "250 OK");
                }
                case "DATA" -> {
                    if (recipients == 0) { // RFC 2920 3.1: a pipelined DATA after no accepted RCPT
                        reply(out, "554 5.5.1 no valid recipients");
                        continue;
                    }
                    reply(out, "354 go ahead");
                    String body = readData(in);
                    if (behaviour.kind() == Behaviour.Kind.SLOW_DATA) {
                        sleepQuietly(behaviour.dataDelay().toMillis());
                    }
                    Matcher id = MESSAGE_ID.matcher(body);
                    String messageId = id.find() ? id.group(1) : "(none)";
                    domain.messageIds.add(messageId);
                    domain.firstArrivalMillis.putIfAbsent(messageId, System.currentTimeMillis());
                    domain.accepted.incrementAndGet();
                    reply(out, "250 2.0.0 accepted");
                }
                case "QUIT" -> {
                    leave.run();
                    reply(out, "221 bye");
                    return;
                }
                default -> reply(out, "500 unknown command");
            }
        }
    }

    /** The address between the angle brackets of a MAIL or RCPT line, lower case ("" if none). */
    private static String addressOf(String line) {
        int open = line.indexOf('<');
        int close = line.indexOf('>', open + 1);
        return open < 0 || close < 0 ? "" : line.substring(open + 1, close).toLowerCase(java.util.Locale.ROOT);
    }

    private static String readData(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String line = readLine(in);
            if (line == null) {
                throw new IOException("connection closed in DATA");
            }
            if (line.equals(".")) {
                return body.toString(StandardCharsets.UTF_8);
            }
            body.writeBytes((line.startsWith(".") ? line.substring(1) : line).getBytes(StandardCharsets.UTF_8));
            body.write('\n');
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            if (b == '\n') {
                byte[] bytes = line.toByteArray();
                int length = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    private static void reply(OutputStream out, String text) throws IOException {
        out.write((text + "\r\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        domains.values().forEach(d -> closeQuietly(d.server));
        sockets.forEach(DomainSmtpTarget::closeQuietly);
        threads.shutdownNow();
    }
}
