package org.jameskvs.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Settings of the replication layer. Property keys (prefix {@code replication.}) and defaults:
 * <pre>
 * key                              default   meaning
 * -------------------------------  --------  -----------------------------------------------------
 * nodes                            (req.)    comma list of node names: the group, in order
 * node.NAME.active                 (req.)    host:port of the node's active path
 * node.NAME.standby                = active  host:port of the standby path (other network segment)
 * user / password                  "" / ""   credentials sent in AUTH to every node
 * placement.rule                   SPREAD    SPREAD: CRC32(queue name) picks the first node, the
 *                                            next node of the group the second; FIRST_TWO: the
 *                                            first two nodes of the group (the rest are spares)
 * placement.QUEUE                  (none)    explicit pair "a,b" for one queue (overrides the rule)
 * heartbeatIntervalMillis          500       PING on both paths of every node this often
 * heartbeatTimeoutMillis           1500      no PING answer for this long marks the path NG
 * requestTimeoutMillis             2000      a request unanswered this long: its path is NG, the
 *                                            request is retried on the other path
 * copyBlockMessages                1000      messages per READ block when rebuilding a copy
 * copyBlockBytes                   4194304   body bytes per READ block when rebuilding
 * leaseRenewMillis                 2000      the owner rewrites its lease record this often
 * leaseTimeoutMillis               10000     a watcher that sees no renewal for this long may take over
 * tickMillis                       50        period of the timer that drives heartbeats and timeouts
 * maxCallsInside                   8192      client calls (put, delete, read, ...) inside the
 *                                            replication at once (submitted, no outcome yet); a
 *                                            caller beyond it waits for room (back-pressure) instead
 *                                            of growing an unbounded backlog in the client
 * catchUpLogEntries                8192      per queue whose second copy is away (node lost, path
 *                                            cut): mutations the writer remembers since that copy
 *                                            left (seq, operation, id, REPLACE state, digest after
 *                                            it; never bodies), so that when the copy comes back
 *                                            with the (seq, digest) the writer expects it is caught
 *                                            up by that suffix instead of CLEAR and a full copy;
 *                                            beyond this many the log is dropped (full rebuild);
 *                                            0: off. Kept only while a copy is away: two copies in
 *                                            sync keep none (see {@code SeqLog})
 * </pre>
 * The placement group is the list of nodes; a replacement copy goes to the next healthy node of
 * the group after the queue's placement (never chosen by hashing per request). A new queue whose
 * placed node is down (heartbeat) is created on the next reachable node instead, and stays there:
 * placement decides where a queue is created, its replication record where it is found.
 *
 * <p>TLS is not a replication setting: one set of client TLS settings
 * ({@link org.jameskvs.client.ClientTls}, the {@code tls.*} keys of the James plug-in) applies to every
 * connection, both paths of every node: {@link ReplicatedQueueOpener#start(ReplicationConfig,
 * org.jameskvs.client.ClientTls)}.
 */
public record ReplicationConfig(List<NodeSpec> nodes, String user, String password, PlacementRule placementRule,
                                Map<String, List<String>> placementOverrides, Duration heartbeatInterval,
                                Duration heartbeatTimeout, Duration requestTimeout, int copyBlockMessages,
                                int copyBlockBytes, Duration leaseRenew, Duration leaseTimeout, Duration tick,
                                int maxCallsInside, int catchUpLogEntries) {

    /** One KVS node: its name and the addresses of its two paths. */
    public record NodeSpec(String name, String activeHost, int activePort, String standbyHost, int standbyPort) {
        public String host(NodePath p) {
            return p == NodePath.ACTIVE ? activeHost : standbyHost;
        }

        public int port(NodePath p) {
            return p == NodePath.ACTIVE ? activePort : standbyPort;
        }
    }

    public enum PlacementRule { SPREAD, FIRST_TWO }

    /**
     * Default of {@code maxCallsInside}: far above what is in flight at full speed (100k calls/s at
     * a few ms each), and each call adds one request per copy's connection, so the node clients'
     * own backlog (1,024 on the wire + 16,384 waiting) cannot fill with client calls alone.
     */
    public static final int DEFAULT_MAX_CALLS_INSIDE = 8192;

    /** Default of {@code catchUpLogEntries}: a few seconds of one queue's traffic at full speed. */
    public static final int DEFAULT_CATCH_UP_LOG_ENTRIES = 8192;

    public ReplicationConfig {
        nodes = List.copyOf(nodes);
        placementOverrides = Map.copyOf(placementOverrides);
        if (nodes.size() < 2) {
            throw new IllegalArgumentException("replication needs at least two nodes in the group");
        }
        if (copyBlockMessages < 1 || copyBlockBytes < 1) {
            throw new IllegalArgumentException("copy block sizes must be positive");
        }
        if (catchUpLogEntries < 0) {
            throw new IllegalArgumentException("catchUpLogEntries must be >= 0 (0: off)");
        }
        if (maxCallsInside < 1) {
            throw new IllegalArgumentException("maxCallsInside must be positive");
        }
        if (heartbeatTimeout.compareTo(heartbeatInterval) <= 0) {
            throw new IllegalArgumentException("heartbeatTimeout must exceed heartbeatInterval");
        }
    }

    /** Defaults for the given nodes (each with the same address on both paths unless the spec says otherwise). */
    public static ReplicationConfig of(List<NodeSpec> nodes, String user, String password) {
        return new ReplicationConfig(nodes, user, password, PlacementRule.SPREAD, Map.of(), Duration.ofMillis(500),
                Duration.ofMillis(1500), Duration.ofMillis(2000), 1000, 4 << 20, Duration.ofMillis(2000),
                Duration.ofMillis(10_000), Duration.ofMillis(50), DEFAULT_MAX_CALLS_INSIDE, DEFAULT_CATCH_UP_LOG_ENTRIES);
    }

    public ReplicationConfig withTimings(Duration heartbeatInterval, Duration heartbeatTimeout, Duration requestTimeout) {
        return new ReplicationConfig(nodes, user, password, placementRule, placementOverrides, heartbeatInterval,
                heartbeatTimeout, requestTimeout, copyBlockMessages, copyBlockBytes, leaseRenew, leaseTimeout, tick, maxCallsInside, catchUpLogEntries);
    }

    public ReplicationConfig withCopyBlock(int messages, int bytes) {
        return new ReplicationConfig(nodes, user, password, placementRule, placementOverrides, heartbeatInterval,
                heartbeatTimeout, requestTimeout, messages, bytes, leaseRenew, leaseTimeout, tick, maxCallsInside, catchUpLogEntries);
    }

    public ReplicationConfig withMaxCallsInside(int max) {
        return new ReplicationConfig(nodes, user, password, placementRule, placementOverrides, heartbeatInterval,
                heartbeatTimeout, requestTimeout, copyBlockMessages, copyBlockBytes, leaseRenew, leaseTimeout, tick, max, catchUpLogEntries);
    }

    public ReplicationConfig withLease(Duration renew, Duration timeout) {
        return new ReplicationConfig(nodes, user, password, placementRule, placementOverrides, heartbeatInterval,
                heartbeatTimeout, requestTimeout, copyBlockMessages, copyBlockBytes, renew, timeout, tick, maxCallsInside, catchUpLogEntries);
    }

    public ReplicationConfig withPlacement(PlacementRule rule, Map<String, List<String>> overrides) {
        return new ReplicationConfig(nodes, user, password, rule, overrides, heartbeatInterval,
                heartbeatTimeout, requestTimeout, copyBlockMessages, copyBlockBytes, leaseRenew, leaseTimeout, tick, maxCallsInside, catchUpLogEntries);
    }

    /** The catch-up log's bound per queue (0: copies that come back are always rebuilt in full). */
    public ReplicationConfig withCatchUpLogEntries(int entries) {
        return new ReplicationConfig(nodes, user, password, placementRule, placementOverrides, heartbeatInterval,
                heartbeatTimeout, requestTimeout, copyBlockMessages, copyBlockBytes, leaseRenew, leaseTimeout, tick,
                maxCallsInside, entries);
    }

    public List<String> nodeNames() {
        return nodes.stream().map(NodeSpec::name).toList();
    }

    public NodeSpec node(String name) {
        for (NodeSpec n : nodes) {
            if (n.name().equals(name)) {
                return n;
            }
        }
        throw new IllegalArgumentException("unknown node " + name);
    }

    /** Reads the keys of the class comment (with prefix {@code replication.}). */
    public static ReplicationConfig fromProperties(Properties p) {
        String names = p.getProperty("replication.nodes", "");
        List<NodeSpec> nodes = new ArrayList<>();
        for (String raw : names.split(",")) {
            String name = raw.trim();
            if (name.isEmpty()) {
                continue;
            }
            String active = p.getProperty("replication.node." + name + ".active");
            if (active == null) {
                throw new IllegalArgumentException("replication.node." + name + ".active is missing");
            }
            String standby = p.getProperty("replication.node." + name + ".standby", active);
            nodes.add(new NodeSpec(name, host(active), port(active), host(standby), port(standby)));
        }
        Map<String, List<String>> overrides = new LinkedHashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("replication.placement.") && !key.equals("replication.placement.rule")) {
                List<String> pair = List.of(p.getProperty(key).split("\\s*,\\s*"));
                if (pair.size() != 2) {
                    throw new IllegalArgumentException(key + " must name two nodes");
                }
                overrides.put(key.substring("replication.placement.".length()), pair);
            }
        }
        return new ReplicationConfig(nodes, p.getProperty("replication.user", ""),
                p.getProperty("replication.password", ""),
                PlacementRule.valueOf(p.getProperty("replication.placement.rule", "SPREAD").toUpperCase(Locale.ROOT)),
                overrides, millis(p, "heartbeatIntervalMillis", 500), millis(p, "heartbeatTimeoutMillis", 1500),
                millis(p, "requestTimeoutMillis", 2000),
                Integer.parseInt(p.getProperty("replication.copyBlockMessages", "1000")),
                Integer.parseInt(p.getProperty("replication.copyBlockBytes", String.valueOf(4 << 20))),
                millis(p, "leaseRenewMillis", 2000), millis(p, "leaseTimeoutMillis", 10_000), millis(p, "tickMillis", 50),
                Integer.parseInt(p.getProperty("replication.maxCallsInside", String.valueOf(DEFAULT_MAX_CALLS_INSIDE))),
                Integer.parseInt(p.getProperty("replication.catchUpLogEntries", String.valueOf(DEFAULT_CATCH_UP_LOG_ENTRIES))));
    }

    private static Duration millis(Properties p, String key, long def) {
        return Duration.ofMillis(Long.parseLong(p.getProperty("replication." + key, String.valueOf(def))));
    }

    private static String host(String hostPort) {
        int i = hostPort.lastIndexOf(':');
        return hostPort.substring(0, i);
    }

    private static int port(String hostPort) {
        return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
    }

    @Override
    public String toString() {
        return "ReplicationConfig{nodes=" + nodes + ", user=" + user + ", rule=" + placementRule + ", overrides="
                + placementOverrides + ", heartbeat=" + heartbeatInterval + "/" + heartbeatTimeout + ", requestTimeout="
                + requestTimeout + ", copyBlock=" + copyBlockMessages + "/" + copyBlockBytes + ", lease=" + leaseRenew
                + "/" + leaseTimeout + ", maxCallsInside=" + maxCallsInside + ", catchUpLogEntries=" + catchUpLogEntries + "}";
    }
}
