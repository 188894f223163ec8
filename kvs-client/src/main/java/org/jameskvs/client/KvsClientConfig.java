package org.jameskvs.client;

import io.netty.channel.EventLoopGroup;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link KvsClient}. Immutable; build with {@link #builder()}. Each setting's default
 * is given on its builder method.
 */
public final class KvsClientConfig {
    private final String host;
    private final int port;
    private final String user;
    private final String password;
    private final ClientTls tls;
    private final int maxInFlight;
    private final int maxPending;
    private final Duration requestTimeout;
    private final Duration connectTimeout;
    private final Duration reconnectBackoffInitial;
    private final Duration reconnectBackoffMax;
    private final int maxFrameBytes;
    private final EventLoopGroup eventLoopGroup;
    private final boolean preferNativeTransport;
    private final boolean reopenOnSameStoreOnly;

    private KvsClientConfig(Builder b) {
        this.host = b.host;
        this.port = b.port;
        this.user = b.user;
        this.password = b.password;
        this.tls = new ClientTls(b.tls, b.tlsTrustAll, b.tlsTrustCertificates, b.tlsVerifyHostname, b.tlsCertChain,
                b.tlsPrivateKey);
        this.maxInFlight = b.maxInFlight;
        this.maxPending = b.maxPending;
        this.requestTimeout = b.requestTimeout;
        this.connectTimeout = b.connectTimeout;
        this.reconnectBackoffInitial = b.reconnectBackoffInitial;
        this.reconnectBackoffMax = b.reconnectBackoffMax;
        this.maxFrameBytes = b.maxFrameBytes;
        this.eventLoopGroup = b.eventLoopGroup;
        this.preferNativeTransport = b.preferNativeTransport;
        this.reopenOnSameStoreOnly = b.reopenOnSameStoreOnly;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's values, to derive a variant. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.host = host;
        b.port = port;
        b.user = user;
        b.password = password;
        b.tls(tls);
        b.maxInFlight = maxInFlight;
        b.maxPending = maxPending;
        b.requestTimeout = requestTimeout;
        b.connectTimeout = connectTimeout;
        b.reconnectBackoffInitial = reconnectBackoffInitial;
        b.reconnectBackoffMax = reconnectBackoffMax;
        b.maxFrameBytes = maxFrameBytes;
        b.eventLoopGroup = eventLoopGroup;
        b.preferNativeTransport = preferNativeTransport;
        b.reopenOnSameStoreOnly = reopenOnSameStoreOnly;
        return b;
    }

    public String host() { return host; }

    public int port() { return port; }

    public String user() { return user; }

    public String password() { return password; }

    /** The TLS settings ({@link ClientTls#OFF} for plain TCP). */
    public ClientTls tls() { return tls; }

    public int maxInFlight() { return maxInFlight; }

    public int maxPending() { return maxPending; }

    public Duration requestTimeout() { return requestTimeout; }

    public Duration connectTimeout() { return connectTimeout; }

    public Duration reconnectBackoffInitial() { return reconnectBackoffInitial; }

    public Duration reconnectBackoffMax() { return reconnectBackoffMax; }

    public int maxFrameBytes() { return maxFrameBytes; }

    /** @return the shared group, or {@code null} when the client runs (and shuts down) its own */
    public EventLoopGroup eventLoopGroup() { return eventLoopGroup; }

    public boolean preferNativeTransport() { return preferNativeTransport; }

    public boolean reopenOnSameStoreOnly() { return reopenOnSameStoreOnly; }

    @Override
    public String toString() {
        return "KvsClientConfig{" + host + ":" + port + ", user=" + user + ", tls=" + tls
                + ", maxInFlight=" + maxInFlight + ", maxPending=" + maxPending
                + ", requestTimeout=" + requestTimeout + ", connectTimeout=" + connectTimeout
                + ", backoff=" + reconnectBackoffInitial + ".." + reconnectBackoffMax
                + ", maxFrameBytes=" + maxFrameBytes + ", reopenOnSameStoreOnly=" + reopenOnSameStoreOnly + "}";
    }

    public static final class Builder {
        private String host = "localhost";
        private int port = 7401;
        private String user = "";
        private String password = "";
        private boolean tls;
        private boolean tlsTrustAll;
        private Path tlsTrustCertificates;
        private boolean tlsVerifyHostname = true;
        private Path tlsCertChain;
        private Path tlsPrivateKey;
        private int maxInFlight = 1024;
        private int maxPending = 16_384;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Duration connectTimeout = Duration.ofSeconds(3);
        private Duration reconnectBackoffInitial = Duration.ofMillis(100);
        private Duration reconnectBackoffMax = Duration.ofSeconds(2);
        private int maxFrameBytes = 64 << 20;
        private EventLoopGroup eventLoopGroup;
        private boolean reopenOnSameStoreOnly;
        private boolean preferNativeTransport = true;

        private Builder() {
        }

        /** Server host name or address. Default {@code localhost}. */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Server port. Default 7401 (the server's default {@code kvs.listen.port}). */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** User and password sent in AUTH, the first request on every connection. Default empty strings. */
        public Builder credentials(String user, String password) {
            this.user = Objects.requireNonNull(user, "user");
            this.password = Objects.requireNonNull(password, "password");
            return this;
        }

        /** Use TLS. Default {@code false}. Without a trust setting the JDK's default trust store is used. */
        public Builder tls(boolean tls) {
            this.tls = tls;
            return this;
        }

        /**
         * Accept any server certificate (no verification at all): for tests only. Implies {@code tls(true)}.
         * Default {@code false}.
         */
        public Builder tlsTrustAll(boolean trustAll) {
            this.tlsTrustAll = trustAll;
            if (trustAll) {
                this.tls = true;
            }
            return this;
        }

        /**
         * A PEM file of the CA (or self-signed server) certificates to trust instead of the JDK's
         * default trust store. Implies {@code tls(true)}. Default {@code null}.
         */
        public Builder tlsTrustCertificates(Path pemFile) {
            this.tlsTrustCertificates = pemFile;
            if (pemFile != null) {
                this.tls = true;
            }
            return this;
        }

        /**
         * Check that the server certificate names {@link #host} (HTTPS-style endpoint identification).
         * Ignored with {@link #tlsTrustAll}. Default {@code true}.
         */
        public Builder tlsVerifyHostname(boolean verify) {
            this.tlsVerifyHostname = verify;
            return this;
        }

        /**
         * The client certificate chain and its PEM PKCS#8 private key, presented to a server that
         * asks for one (mutual TLS: the server's {@code tls.clientAuth}). Implies {@code tls(true)}.
         * Default none.
         */
        public Builder tlsClientCertificate(Path certChain, Path privateKey) {
            this.tlsCertChain = certChain;
            this.tlsPrivateKey = privateKey;
            if (certChain != null) {
                this.tls = true;
            }
            return this;
        }

        /** All TLS settings at once (replacing any set before), e.g. read by {@link ClientTls#fromProperties}. */
        public Builder tls(ClientTls settings) {
            this.tls = settings.enabled();
            this.tlsTrustAll = settings.trustAll();
            this.tlsTrustCertificates = settings.trustCertificates();
            this.tlsVerifyHostname = settings.verifyHostname();
            this.tlsCertChain = settings.certChain();
            this.tlsPrivateKey = settings.privateKey();
            return this;
        }

        /**
         * Requests written and not yet answered, at most. When the window is full, further calls do
         * not block: they wait in the pending queue ({@link #maxPending}) and are written as answers
         * free the window, so their futures simply complete later. Default 1024.
         */
        public Builder maxInFlight(int maxInFlight) {
            this.maxInFlight = maxInFlight;
            return this;
        }

        /**
         * Calls accepted and not yet written (mostly: waiting for room in the in-flight window), at
         * most. A call beyond that is not queued: its future completes at once with
         * {@code BACKLOG_FULL} (nothing was sent), so memory
         * stays bounded. Every waiting call holds its message bytes: lower this for big messages.
         * Default 16,384.
         */
        public Builder maxPending(int maxPending) {
            this.maxPending = maxPending;
            return this;
        }

        /**
         * Time from the call to its response. Past it the future completes with {@code TIMEOUT}
         * (outcome unknown) and, since responses come in order and one cannot be skipped, the
         * connection is closed and re-established. Time waiting for window room counts. Default 5 s.
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = Objects.requireNonNull(timeout, "requestTimeout");
            return this;
        }

        /** TCP connect and, separately, TLS handshake timeout. Default 3 s. */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = Objects.requireNonNull(timeout, "connectTimeout");
            return this;
        }

        /**
         * Delay before the first reconnect attempt, doubled after each failed attempt up to
         * {@code max}. Defaults 100 ms and 2 s.
         */
        public Builder reconnectBackoff(Duration initial, Duration max) {
            this.reconnectBackoffInitial = Objects.requireNonNull(initial, "initial");
            this.reconnectBackoffMax = Objects.requireNonNull(max, "max");
            return this;
        }

        /**
         * Largest response frame accepted (bytes after the length field). A bigger response is
         * skipped and its request completes with {@code FRAME_TOO_LARGE}; the connection goes on.
         * Default 64 MiB.
         */
        public Builder maxFrameBytes(int maxFrameBytes) {
            this.maxFrameBytes = maxFrameBytes;
            return this;
        }

        /**
         * A Netty NIO (or epoll) group to share with other clients or servers; the client does not
         * shut it down. Default {@code null}: the client runs one daemon I/O thread of its own and
         * shuts it down in {@link KvsClient#close()}.
         */
        public Builder eventLoopGroup(EventLoopGroup group) {
            this.eventLoopGroup = group;
            return this;
        }

        /**
         * For the client's own group: use epoll when netty-transport-native-epoll is on the class
         * path and {@code Epoll.isAvailable()}, else NIO. Default {@code true}.
         */
        public Builder preferNativeTransport(boolean prefer) {
            this.preferNativeTransport = prefer;
            return this;
        }

        /**
         * A handle re-opened after a reconnect names the store that answered its first OPEN, so a
         * server that lost its disk refuses it ({@code STORE_CHANGED}) and the handle ends with that
         * status instead of moving to the emptied store. For a caller that keeps copies elsewhere
         * (the replication). Default {@code false}: the handle is re-opened on whatever store answers,
         * and another store than before is logged as an ERROR (the server lost what it held).
         */
        public Builder reopenOnSameStoreOnly(boolean sameStoreOnly) {
            this.reopenOnSameStoreOnly = sameStoreOnly;
            return this;
        }

        public KvsClientConfig build() {
            require(port > 0 && port < 65536, "port must be 1..65535");
            require(maxInFlight > 0, "maxInFlight must be positive");
            require(maxPending > 0, "maxPending must be positive");
            require(positive(requestTimeout), "requestTimeout must be positive");
            require(positive(connectTimeout), "connectTimeout must be positive");
            require(positive(reconnectBackoffInitial), "reconnect backoff must be positive");
            require(reconnectBackoffMax.compareTo(reconnectBackoffInitial) >= 0, "reconnect backoff max below initial");
            require(maxFrameBytes >= 64, "maxFrameBytes too small");
            return new KvsClientConfig(this);
        }

        private static boolean positive(Duration d) {
            return !d.isNegative() && !d.isZero();
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
