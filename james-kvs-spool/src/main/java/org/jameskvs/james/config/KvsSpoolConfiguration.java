package org.jameskvs.james.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

import org.jameskvs.client.ClientTls;

/**
 * Settings of the James KVS spool, read from {@code kvs-spool.properties} in James's conf directory.
 * Every key is optional; defaults in brackets.
 * <dl>
 * <dt>{@code servers} [localhost:7400]</dt><dd>KVS servers, comma separated {@code host:port}. The
 *   single-server client uses the first; a replicated opener uses them all.</dd>
 * <dt>{@code user} [james], {@code password} [empty]</dt><dd>credentials of the AUTH request.</dd>
 * <dt>{@code tls} [false], {@code tls.*}</dt><dd>TLS for <i>every</i> connection to the KVS servers: the
 *   single-server one, both paths (active and standby) of every replicated node, and the OR-set
 *   repository's log readers. Keys and defaults: {@link org.jameskvs.client.ClientTls}
 *   ({@code tls.trustCertificates} [JDK trust store] PEM of trusted CAs, {@code tls.trustAll} [false]
 *   tests only, {@code tls.verifyHostname} [true], and for servers with {@code tls.clientAuth}: the
 *   client certificate {@code tls.certChain} and its key {@code tls.privateKey} [none]).</dd>
 * <dt>{@code maxInFlight} [1024]</dt><dd>requests pipelined on one connection before callers wait.</dd>
 * <dt>{@code requestTimeout} [30000]</dt><dd>ms before a request is answered TIMEOUT; an enqueue that
 *   times out fails (SMTP answers 4xx) since the mail may not be stored.</dd>
 * <dt>{@code intakeQueues} [spool]</dt><dd>James queues whose enqueue answers an SMTP client
 *   (comma separated). An enqueue there <em>by an intake caller</em> (below) that the store refuses
 *   fails at once, or after {@code requestTimeout} when its outcome is unknown, so the client gets a
 *   quick 4xx and keeps the mail.</dd>
 * <dt>{@code intakeCallers} [{@value #DEFAULT_INTAKE_CALLERS}]</dt><dd>the James classes (comma
 *   separated) whose enqueues answer a client that still holds the mail: SMTP's
 *   {@code SendMailHandler}, JMAP's submission and MDN methods, webadmin's reprocessing of a
 *   repository (the mail stays in the repository when it fails). Told apart by the class that asked
 *   the queue factory for the queue. Every other enqueue into an intake queue carries mail James
 *   already holds alone (the spooler's own re-enqueue, {@code Requeue}, bounces, forwards, the
 *   mailet context's {@code sendMail}) and waits for the store like any accepted mail (below):
 *   failing it would send the mail to the error processor, or make the spooler reject, i.e. delete,
 *   the mail it was processing.</dd>
 * <dt>{@code acceptedMailRetryTimeout} [120000]</dt><dd>an alert threshold, in ms, no longer a
 *   deadline. An enqueue into any other queue (e.g. RemoteDelivery's {@code outgoing}: the mail was
 *   already answered 250) retries whatever the store's state explains (unreachable, being restored,
 *   too few copies, full, a queue that cannot be created yet) until it is stored or James stops, with
 *   the same mail id so a retry never stores it twice; the mail never goes to James's error processor
 *   for it. A wait longer than this is logged (WARN, once per mail) and makes the health check report
 *   the spool degraded while it lasts.</dd>
 * <dt>{@code frameMaxBytes} [67108864]</dt><dd>the KVS servers' {@code frame.maxBytes} (64 MiB): keep
 *   them equal. A mail is stored only if its encoded form fits in a frame with room for the protocol's
 *   headers ({@link #maxMailBytes()}); a larger one is refused before it is sent, for good (it can never
 *   fit), and the SMTP hook {@code org.jameskvs.james.smtp.SpoolSizeLimitHook} answers such a message
 *   552 at the end of DATA. James's {@code maxmessagesize} (smtpserver.xml) should be at most
 *   {@link #maxSmtpMessageBytes()}, so James itself refuses it first (and announces the limit).</dd>
 * <dt>{@code readAheadWindow} [64]</dt><dd>mails read ahead of the dequeuers per priority level: the
 *   only mail held in James's heap besides the ones being processed, whatever the backlog.</dd>
 * <dt>{@code readBlockSize} [32]</dt><dd>messages asked per READ request.</dd>
 * <dt>{@code readBlockBytes} [8388608]</dt><dd>body bytes per READ request (at least one message
 *   is always returned).</dd>
 * <dt>{@code idlePollInterval} [1000]</dt><dd>ms between reads of an idle queue's tail; mail enqueued
 *   through this James wakes the readers at once, this only bounds the latency of anything else.</dd>
 * <dt>{@code nodeId} [the host name]</dt><dd>this James node's id in the cluster: the default of
 *   {@code ownerName} and {@code namespace}. The host name is read from {@code HOSTNAME}, then
 *   {@code /proc/sys/kernel/hostname}, {@code /etc/hostname} (no DNS lookup), every character outside
 *   {@code [A-Za-z0-9._-]} replaced by {@code -}; {@code james} if none is found. Two James processes
 *   on one host need distinct ids (the second one started under a live id refuses to start).</dd>
 * <dt>{@code ownerName} [nodeId]</dt><dd>owner recorded on the KVS queues this node writes. Each James
 *   node on one KVS cluster needs its own {@code ownerName}/{@code namespace}: a node started while
 *   another live process writes under the same ones refuses to start, and a node that finds another
 *   writer holding its queues stops (fenced).</dd>
 * <dt>{@code epoch} [1]</dt><dd>writer epoch: a node started with a higher epoch takes the queues
 *   over and fences the older writer.</dd>
 * <dt>{@code namespace} [nodeId]</dt><dd>prefix of every KVS queue name, so several James
 *   installations can share servers: {@code <namespace>/queue/<name>@p<priority>} and
 *   {@code <namespace>/repo/<repository url>}.</dd>
 * <dt>{@code repository.orset} [none]</dt><dd>mail repository URLs (comma separated prefixes, e.g.
 *   {@code kvs://var/mail/error/}) kept as a converging OR-set repository
 *   ({@code org.jameskvs.james.repository.orset.OrSetMailRepository}, module james-kvs-orset: one log per James node,
 *   written by every node at once, node id = {@code ownerName}, which must then differ per node);
 *   every other {@code kvs://} URL is a plain {@code KvsMailRepository} (one writer). Applies when
 *   {@code mailrepositorystore.xml} registers {@code org.jameskvs.james.repository.SelectingKvsMailRepository}
 *   for the {@code kvs} protocol.</dd>
 * <dt>{@code adoption.enabled} [true]</dt><dd>with {@code replication.nodes} set: this node watches
 *   the other James nodes' leases (the lease of each namespace's spool queue) and, when one expires,
 *   adopts that namespace's mail queues (moves their mail into its own queues, delays and retry state
 *   kept) so its own mailet pipeline delivers it, and its one-writer repositories (into its own
 *   repositories of the same URL) ({@code org.jameskvs.james.cluster}). The lost node, restarted,
 *   takes its namespace back. Without replication there are no leases, and no adoption.</dd>
 * <dt>{@code adoption.checkIntervalMillis} [replication.leaseRenewMillis]</dt><dd>how often the peers'
 *   leases are looked at, and an adopted namespace is polled for mail once drained.</dd>
 * <dt>{@code adoption.moveBlock} [64]</dt><dd>mails moved per round trip from an adopted queue (also
 *   the most that can be delivered twice when a hand-over or a racing adopter fences the move).</dd>
 * <dt>{@code replication.*} [none]</dt><dd>when {@code replication.nodes} is set, every queue and
 *   repository is kept on two of those KVS nodes (and {@code servers} is not used): see
 *   {@code org.jameskvs.replication.ReplicationConfig} for the keys (node addresses with active and
 *   standby paths, heartbeat and request timeouts, placement, lease). {@code replication.user} and
 *   {@code replication.password} default to {@code user} and {@code password}.</dd>
 * </dl>
 */
public final class KvsSpoolConfiguration {
    public static final String FILE_NAME = "kvs-spool.properties";
    /** The James 3.8.x classes whose enqueue answers a client that keeps the mail if it fails. */
    public static final String DEFAULT_INTAKE_CALLERS = "org.apache.james.smtpserver.SendMailHandler,"
        + "org.apache.james.jmap.method.EmailSubmissionSetMethod,org.apache.james.jmap.method.MDNSendMethod,"
        + "org.apache.james.jmap.draft.send.MailSpool,org.apache.james.webadmin.service.ReprocessingService";
    /**
     * Room in a frame for everything but the encoded mail: the request header and PUT fields, or the
     * response header and message record a READ or GET answers with (about 100 bytes with ids of
     * at most 255 bytes), with a wide margin.
     */
    public static final int PROTOCOL_RESERVE_BYTES = 4096;
    /**
     * Room, besides the MIME bytes James received, for the rest of an encoded mail (envelope,
     * recipients, attributes) when the SMTP hook judges a message by its size alone.
     */
    public static final int ENVELOPE_RESERVE_BYTES = 64 * 1024;

    private final List<String> servers;
    private final String user;
    private final String password;
    private final ClientTls tls;
    private final int maxInFlight;
    private final Duration requestTimeout;
    private final java.util.Set<String> intakeQueues;
    private final java.util.Set<String> intakeCallers;
    private final Duration acceptedMailRetryTimeout;
    private final int frameMaxBytes;
    private final int readAheadWindow;
    private final int readBlockSize;
    private final int readBlockBytes;
    private final Duration idlePollInterval;
    private final String nodeId;
    private final String ownerName;
    private final long epoch;
    private final boolean adoptionEnabled;
    private final Duration adoptionCheckInterval;
    private final int adoptionMoveBlock;
    private final String namespace;
    private final List<String> orSetRepositories;
    private final Properties properties;

    private KvsSpoolConfiguration(Properties p) {
        this.properties = new Properties();
        this.properties.putAll(p);
        this.servers = Arrays.stream(p.getProperty("servers", "localhost:7400").split(","))
            .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableList());
        this.user = p.getProperty("user", "james");
        this.password = p.getProperty("password", "");
        try {
            this.tls = ClientTls.fromProperties(p, "");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("kvs-spool: " + e.getMessage(), e);
        }
        this.maxInFlight = positiveInt(p, "maxInFlight", 1024);
        this.requestTimeout = Duration.ofMillis(positiveInt(p, "requestTimeout", 30_000));
        this.intakeQueues = Arrays.stream(p.getProperty("intakeQueues", "spool").split(","))
            .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
        this.intakeCallers = Arrays.stream(p.getProperty("intakeCallers", DEFAULT_INTAKE_CALLERS).split(","))
            .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
        this.acceptedMailRetryTimeout = Duration.ofMillis(positiveInt(p, "acceptedMailRetryTimeout", 120_000));
        this.frameMaxBytes = positiveInt(p, "frameMaxBytes", 64 * 1024 * 1024);
        this.readAheadWindow = positiveInt(p, "readAheadWindow", 64);
        this.readBlockSize = positiveInt(p, "readBlockSize", 32);
        this.readBlockBytes = positiveInt(p, "readBlockBytes", 8 * 1024 * 1024);
        this.idlePollInterval = Duration.ofMillis(positiveInt(p, "idlePollInterval", 1000));
        this.nodeId = p.getProperty("nodeId", HostName.asNodeId()).trim();
        this.ownerName = p.getProperty("ownerName", nodeId);
        this.epoch = Long.parseLong(p.getProperty("epoch", "1").trim());
        this.namespace = p.getProperty("namespace", nodeId);
        this.adoptionEnabled = Boolean.parseBoolean(p.getProperty("adoption.enabled", "true").trim());
        this.adoptionCheckInterval = Duration.ofMillis(positiveInt(p, "adoption.checkIntervalMillis",
            positiveInt(p, "replication.leaseRenewMillis", 2000)));
        this.adoptionMoveBlock = positiveInt(p, "adoption.moveBlock", 64);
        this.orSetRepositories = Arrays.stream(p.getProperty("repository.orset", "").split(","))
            .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableList());
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("kvs-spool: 'servers' lists no server");
        }
        if (frameMaxBytes < 2 * (PROTOCOL_RESERVE_BYTES + ENVELOPE_RESERVE_BYTES)) {
            throw new IllegalArgumentException("kvs-spool: 'frameMaxBytes' must be at least "
                + 2 * (PROTOCOL_RESERVE_BYTES + ENVELOPE_RESERVE_BYTES) + ", was " + frameMaxBytes);
        }
        if (nodeId.isEmpty() || nodeId.contains("/")) {
            throw new IllegalArgumentException("kvs-spool: 'nodeId' must be non-empty without '/'");
        }
        if (namespace.isEmpty() || namespace.contains("/")) {
            throw new IllegalArgumentException("kvs-spool: 'namespace' must be non-empty without '/'");
        }
    }

    public static KvsSpoolConfiguration from(Properties properties) {
        return new KvsSpoolConfiguration(properties);
    }

    public static KvsSpoolConfiguration defaults() {
        return from(new Properties());
    }

    /** Reads {@code kvs-spool.properties} in {@code confDirectory}; defaults if the file is absent. */
    public static KvsSpoolConfiguration load(Path confDirectory) {
        Path file = confDirectory.resolve(FILE_NAME);
        Properties properties = new Properties();
        if (Files.exists(file)) {
            try (InputStream in = Files.newInputStream(file)) {
                properties.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot read " + file, e);
            }
        }
        return from(properties);
    }

    private static int positiveInt(Properties p, String key, int defaultValue) {
        int value = Integer.parseInt(p.getProperty(key, String.valueOf(defaultValue)).trim());
        if (value <= 0) {
            throw new IllegalArgumentException("kvs-spool: '" + key + "' must be > 0, was " + value);
        }
        return value;
    }

    public List<String> servers() { return servers; }

    public String user() { return user; }

    public String password() { return password; }

    /** The TLS settings of every connection to the KVS servers. */
    public ClientTls tls() { return tls; }

    public int maxInFlight() { return maxInFlight; }

    public Duration requestTimeout() { return requestTimeout; }

    /** True for a queue whose enqueue answers an SMTP client (see {@code intakeQueues}). */
    public boolean isIntakeQueue(String jamesQueueName) { return intakeQueues.contains(jamesQueueName); }

    /**
     * True for a class (by name) whose enqueues answer a client that keeps the mail if they fail
     * (see {@code intakeCallers}).
     */
    public boolean isIntakeCaller(String className) { return intakeCallers.contains(className); }

    public Duration acceptedMailRetryTimeout() { return acceptedMailRetryTimeout; }

    public int frameMaxBytes() { return frameMaxBytes; }

    /** The largest encoded mail (the body of a KVS message) the servers store and hand back. */
    public int maxMailBytes() { return frameMaxBytes - PROTOCOL_RESERVE_BYTES; }

    /** The largest message, as James received it, that the SMTP hook lets through to the spool. */
    public int maxSmtpMessageBytes() { return maxMailBytes() - ENVELOPE_RESERVE_BYTES; }

    public int readAheadWindow() { return readAheadWindow; }

    public int readBlockSize() { return readBlockSize; }

    public int readBlockBytes() { return readBlockBytes; }

    public Duration idlePollInterval() { return idlePollInterval; }

    /** This James node's id in the cluster ({@code nodeId}, by default the host name). */
    public String nodeId() { return nodeId; }

    public String ownerName() { return ownerName; }

    /** True when this node adopts the namespaces of James nodes whose lease expired. */
    public boolean adoptionEnabled() { return adoptionEnabled && replicated(); }

    public Duration adoptionCheckInterval() { return adoptionCheckInterval; }

    public int adoptionMoveBlock() { return adoptionMoveBlock; }

    public long epoch() { return epoch; }

    public String namespace() { return namespace; }

    /** The {@code repository.orset} prefixes. */
    public List<String> orSetRepositories() { return orSetRepositories; }

    /**
     * True if the repository at {@code url} (e.g. {@code kvs://var/mail/error/}; James drops the
     * trailing slash, so both spellings match) is an OR-set repository.
     */
    public boolean isOrSetRepository(String url) {
        String withSlash = url.endsWith("/") ? url : url + "/";
        return orSetRepositories.stream().anyMatch(prefix -> withSlash.startsWith(prefix) || url.startsWith(prefix));
    }

    /** Prefix of the KVS queues holding James mail queues. */
    public String mailQueuePrefix() {
        return namespace + "/queue/";
    }

    /** Prefix of the KVS queues holding James mail repositories. */
    public String mailRepositoryPrefix() {
        return namespace + "/repo/";
    }

    /** True when {@code replication.nodes} is set: queues live on two nodes of that group. */
    public boolean replicated() {
        return !properties.getProperty("replication.nodes", "").isBlank();
    }

    /** The raw settings (a copy), for the replication layer's own keys. */
    public Properties properties() {
        Properties copy = new Properties();
        copy.putAll(properties);
        copy.putIfAbsent("replication.user", user);
        copy.putIfAbsent("replication.password", password);
        return copy;
    }
}
