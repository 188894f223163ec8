package org.jameskvs.delivery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * Every setting of {@link LaneDelivery}, read from the mailet's parameters in mailetcontainer.xml (each
 * key is an element inside {@code <mailet class="org.jameskvs.delivery.LaneDelivery">}). All optional.
 *
 * <table>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code queuePrefix}</td><td>{@code lane-}</td><td>prefix of the lane queue names: {@code <prefix>d-<domain>} for a dedicated lane, {@code <prefix>b-<n>} for a bucket</td></tr>
 * <tr><td>{@code dedicatedDomains}</td><td>(none)</td><td>comma-separated recipient domains that get a queue of their own (the busy destinations)</td></tr>
 * <tr><td>{@code buckets}</td><td>{@code 64}</td><td>hashed queues shared by every other domain (the long tail)</td></tr>
 * <tr><td>{@code maxQueues}</td><td>{@code 1000}</td><td>dedicated + buckets + one delay queue per retry delay may not exceed this (the paper's budget of about 1,000 queues per gateway); larger: the mailet refuses to start</td></tr>
 * <tr><td>{@code concurrency}</td><td>{@code 4}</td><td>connections open at once per lane (per James node), and so mails in delivery at once per lane</td></tr>
 * <tr><td>{@code initialConcurrency}</td><td>{@code 1}</td><td>where a lane's concurrency starts (slow start: +1 per delivery that got through up to {@code concurrency}; a 421 or connect/greeting failure halves it, then it grows by about 1 per round)</td></tr>
 * <tr><td>{@code maxMessageRate}</td><td>{@code 0}</td><td>mails per second per lane (per James node), evenly spaced; 0 = no limit</td></tr>
 * <tr><td>{@code maxDeliveriesPerConnection}</td><td>{@code 100}</td><td>mails sent over one connection before it is closed</td></tr>
 * <tr><td>{@code idleConnectionMillis}</td><td>{@code 5000}</td><td>an open connection with no mail to send for this long is closed</td></tr>
 * <tr><td>{@code port}</td><td>{@code 25}</td><td>SMTP port of the MX hosts</td></tr>
 * <tr><td>{@code gateway}</td><td>(none)</td><td>as RemoteDelivery's {@code gateway}: comma-separated {@code host} or
 * {@code host:port} ({@code [IPv6]:port}) of smart hosts; when set, every lane delivers to them instead of its
 * domain's MX hosts (no MX lookup; each host name looked up through James's DNS; tried in the order given, the
 * next when one cannot be connected to or greeted). Lanes, their limits, rates, retries and reply rules stay per
 * recipient domain / bucket as without a gateway; {@code mxGrouping} then groups nothing (each domain goes by its
 * name)</td></tr>
 * <tr><td>{@code gatewayPort}</td><td>{@code 25}</td><td>as RemoteDelivery's: the port of each {@code gateway} host
 * that names none (ignored without {@code gateway})</td></tr>
 * <tr><td>{@code connectTimeoutMillis}</td><td>{@code 30000}</td><td>TCP connect timeout per MX address</td></tr>
 * <tr><td>{@code greetingTimeoutMillis}</td><td>{@code 300000}</td><td>wait for the 220 greeting (RFC 5321 4.5.3.2: 5 min)</td></tr>
 * <tr><td>{@code commandTimeoutMillis}</td><td>{@code 300000}</td><td>wait for the reply to EHLO, MAIL, RCPT, DATA, RSET</td></tr>
 * <tr><td>{@code dataTimeoutMillis}</td><td>{@code 600000}</td><td>wait for the reply after the final dot (RFC 5321: 10 min)</td></tr>
 * <tr><td>{@code retryDelays}</td><td>{@code 60000,300000,900000,3600000}</td><td>ms to wait after the 1st, 2nd, ... temporary failure of a mail; the last repeats. Each delay has its own FIFO queue {@code <prefix>delay-<i>} (see DelayTiers)</td></tr>
 * <tr><td>{@code maxAttempts}</td><td>{@code 6}</td><td>attempts before a temporarily failing mail is bounced</td></tr>
 * <tr><td>{@code suspendAfterFailures}</td><td>{@code 3}</td><td>the suspension rule's threshold: this many 421 replies or connect/greeting failures of a lane ...</td></tr>
 * <tr><td>{@code suspendWindowMillis}</td><td>{@code 300000}</td><td>... within this window ...</td></tr>
 * <tr><td>{@code suspendForMillis}</td><td>{@code 600000}</td><td>... suspend the lane for this long: it opens no connection until then</td></tr>
 * <tr><td>{@code replyRule1}, {@code replyRule2}, ... (up to {@code replyRule50}, numbered without gaps)</td><td>(none)</td><td>traffic shaping rules on the SMTP replies of a destination, besides the built-in 421 rule above:
 * {@code key=value} pairs separated by {@code ;}: what a reply must match, any of {@code code} ({@code 421}, {@code 4xx}),
 * {@code enhancedCode} ({@code 4.7.1}, or {@code 4.7} for all of 4.7.x) and {@code text} (a case-insensitive Java regular
 * expression found in the reply text, e.g. {@code too many connections|rate limited}), all named parts must match; and
 * {@code suspendAfterFailures}, {@code suspendWindowMillis}, {@code suspendForMillis}, defaulting to the three settings above:
 * that many matching replies (to any command, at the greeting included) within the window suspend the destination (its
 * dedicated lane, or only that domain in its bucket) for that long; the suspension expires by itself. With {@code action=bounce}
 * (default {@code suspend}) the rule orders that domain's mail bounced, queued or arriving, for {@code bounceForMillis} (same default);
 * with {@code action=throttle; maxMessageRate=2} it paces the domain (its dedicated lane, or in its bucket that domain alone: the
 * bucket's other domains go on) at 2 mails/s at most for {@code throttleForMillis} (same default); on this node, or with
 * {@code sharedLimits} shared by demand among the nodes throttling that domain (as a lane's {@code maxMessageRate}).
 * Example: {@code <replyRule1>code=4xx; text=rate limited; suspendAfterFailures=3; suspendForMillis=60000</replyRule1>}.
 * See {@link ReplyRule}</td></tr>
 * <tr><td>{@code deliveryThreads}</td><td>{@code 64}</td><td>threads doing SMTP I/O for all lanes together</td></tr>
 * <tr><td>{@code heloName}</td><td>{@code localhost}</td><td>name given in EHLO/HELO</td></tr>
 * <tr><td>{@code bounceProcessor}</td><td>{@code bounces}</td><td>processor a permanently failed mail is sent to (as RemoteDelivery's)</td></tr>
 * <tr><td>{@code mxGrouping}</td><td>{@code false}</td><td>{@code true}: a tail domain's bucket is chosen by its best MX host (looked up through James's DNS, remembered an hour), so domains sharing MX hosts share a lane, its limits and its rate; a domain whose MX cannot be looked up goes by its name</td></tr>
 * <tr><td>{@code sharedLimits}</td><td>{@code false}</td><td>{@code true}: {@code concurrency} and {@code maxMessageRate} hold for the lane across every James node on the KVS cluster, not per node (connection slots are locks on one KVS server: the first of {@code servers}, or of {@code replication.nodes}; each of the n live nodes that have mail for a lane paces 1/n of its rate, a node with none for it holds none back; see KvsSharedLimits)</td></tr>
 * <tr><td>{@code sharedLimitsMaxNodes}</td><td>{@code 8}</td><td>James nodes that may share the limits at once (member locks probed every refresh)</td></tr>
 * <tr><td>{@code sharedLimitsRefreshMillis}</td><td>{@code 2000}</td><td>how often a node counts the live nodes and, per rate-limited lane it has mail for, the nodes that have mail for it too (a node joining, leaving, or gaining or running out of mail for a lane changes that lane's shares within about this)</td></tr>
 * </table>
 *
 * <p>Receipt regulation is an SMTP hook ({@link LaneBacklogHook}), configured on its handler in
 * smtpserver.xml ({@code <handler class="org.jameskvs.delivery.LaneBacklogHook"><laneHighWater>...}), read by
 * {@link #waterMarks}:
 * <table>
 * <tr><th>key</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code laneHighWater}</td><td>{@code 100000}</td><td>mails queued in a lane at which RCPT to its domains is answered 452 4.3.1</td></tr>
 * <tr><td>{@code laneLowWater}</td><td>80 % of the high-water mark</td><td>queued mails at or below which that lane's domains are accepted again</td></tr>
 * </table>
 */
public record LaneDeliveryConfig(
    String queuePrefix,
    Set<String> dedicatedDomains,
    int buckets,
    int maxQueues,
    int concurrency,
    int initialConcurrency,
    double maxMessageRate,
    int maxDeliveriesPerConnection,
    Duration idleConnection,
    int port,
    List<Gateway> gateways,
    Duration connectTimeout,
    Duration greetingTimeout,
    Duration commandTimeout,
    Duration dataTimeout,
    List<Duration> retryDelays,
    int maxAttempts,
    int suspendAfterFailures,
    Duration suspendWindow,
    Duration suspendFor,
    int deliveryThreads,
    String heloName,
    String bounceProcessor,
    boolean mxGrouping,
    boolean sharedLimits,
    int sharedLimitsMaxNodes,
    Duration sharedLimitsRefresh,
    List<ReplyRule> replyRules) {

    /** One {@code gateway} host (a name or an address literal, not yet looked up) and its port. */
    public record Gateway(String host, int port) {
        public Gateway {
            if (host.isBlank()) {
                throw new IllegalArgumentException("gateway host must not be empty");
            }
            validPort("gateway port of " + host, port);
        }

        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    public LaneDeliveryConfig {
        gateways = List.copyOf(gateways);
        validPort("port", port);
        if (buckets < 1) {
            throw new IllegalArgumentException("buckets must be at least 1, was " + buckets);
        }
        if (dedicatedDomains.size() + buckets + retryDelays.size() > maxQueues) {
            throw new IllegalArgumentException("dedicatedDomains (" + dedicatedDomains.size() + ") + buckets (" + buckets
                + ") + retryDelays (" + retryDelays.size() + " delay queues) exceed maxQueues (" + maxQueues + ")");
        }
        positive("concurrency", concurrency);
        positive("initialConcurrency", initialConcurrency);
        positive("maxDeliveriesPerConnection", maxDeliveriesPerConnection);
        positive("maxAttempts", maxAttempts);
        positive("suspendAfterFailures", suspendAfterFailures);
        positive("deliveryThreads", deliveryThreads);
        positive("sharedLimitsMaxNodes", sharedLimitsMaxNodes);
        if (sharedLimitsRefresh.isZero()) {
            throw new IllegalArgumentException("sharedLimitsRefreshMillis must be at least 1");
        }
        if (retryDelays.isEmpty()) {
            throw new IllegalArgumentException("retryDelays must name at least one delay");
        }
    }

    /** Reads the settings through {@code parameter} (the mailet's getInitParameter), defaults for the absent ones. */
    public static LaneDeliveryConfig from(Function<String, String> parameter) {
        Function<String, String> p = key -> {
            String value = parameter.apply(key);
            return value == null || value.isBlank() ? null : value.strip();
        };
        return new LaneDeliveryConfig(
            orElse(p.apply("queuePrefix"), "lane-"),
            domains(orElse(p.apply("dedicatedDomains"), "")),
            integer(p, "buckets", 64),
            integer(p, "maxQueues", 1000),
            integer(p, "concurrency", 4),
            integer(p, "initialConcurrency", 1),
            rate(p.apply("maxMessageRate")),
            integer(p, "maxDeliveriesPerConnection", 100),
            millis(p, "idleConnectionMillis", 5_000),
            integer(p, "port", 25),
            gateways(p.apply("gateway"), integer(p, "gatewayPort", 25)),
            millis(p, "connectTimeoutMillis", 30_000),
            millis(p, "greetingTimeoutMillis", 300_000),
            millis(p, "commandTimeoutMillis", 300_000),
            millis(p, "dataTimeoutMillis", 600_000),
            delays(orElse(p.apply("retryDelays"), "60000,300000,900000,3600000")),
            integer(p, "maxAttempts", 6),
            integer(p, "suspendAfterFailures", 3),
            millis(p, "suspendWindowMillis", 300_000),
            millis(p, "suspendForMillis", 600_000),
            integer(p, "deliveryThreads", 64),
            orElse(p.apply("heloName"), "localhost"),
            orElse(p.apply("bounceProcessor"), "bounces"),
            bool("mxGrouping", p.apply("mxGrouping")),
            bool("sharedLimits", p.apply("sharedLimits")),
            integer(p, "sharedLimitsMaxNodes", 8),
            millis(p, "sharedLimitsRefreshMillis", 2_000),
            replyRules(p, integer(p, "suspendAfterFailures", 3), millis(p, "suspendWindowMillis", 300_000),
                millis(p, "suspendForMillis", 600_000)));
    }

    /** Most reply rules read ({@code replyRule1} .. {@code replyRule50}). */
    static final int MAX_REPLY_RULES = 50;

    private static List<ReplyRule> replyRules(Function<String, String> p, int threshold, Duration window, Duration suspendFor) {
        List<ReplyRule> rules = new ArrayList<>();
        for (int i = 1; i <= MAX_REPLY_RULES; i++) {
            String spec = p.apply("replyRule" + i);
            if (spec == null) {
                if (p.apply("replyRule" + (i + 1)) != null) {
                    throw new IllegalArgumentException("replyRule" + (i + 1) + " without replyRule" + i + ": number the rules from 1 without gaps");
                }
                break;
            }
            rules.add(ReplyRule.parse("replyRule" + i, spec, threshold, window, suspendFor));
        }
        return List.copyOf(rules);
    }

    /** The receipt regulation marks of one lane: refuse at {@code high}, accept again at {@code low}. */
    public record WaterMarks(long high, long low) {
        public WaterMarks {
            if (high < 1 || low < 0 || low >= high) {
                throw new IllegalArgumentException("laneLowWater (" + low + ") must be below laneHighWater (" + high + "), both positive");
            }
        }
    }

    /** {@link LaneBacklogHook}'s settings, read through {@code parameter}. */
    public static WaterMarks waterMarks(Function<String, String> parameter) {
        Function<String, String> p = key -> {
            String value = parameter.apply(key);
            return value == null || value.isBlank() ? null : value.strip();
        };
        long high = integer(p, "laneHighWater", 100_000);
        String low = p.apply("laneLowWater");
        return new WaterMarks(high, low == null ? high * 8 / 10 : integer(p, "laneLowWater", 0));
    }

    /** The delay before the next attempt of a mail that has failed {@code failures} times (1 = first failure). */
    public Duration retryDelay(int failures) {
        return retryDelays.get(Math.min(Math.max(failures, 1), retryDelays.size()) - 1);
    }

    /** Whether mail goes to {@code gateway} hosts instead of each domain's MX hosts. */
    public boolean gatewayMode() {
        return !gateways.isEmpty();
    }

    /**
     * RemoteDelivery's gateway syntax: {@code host}, {@code host:port} or {@code [IPv6]:port}, separated by
     * commas; a host without a port gets {@code defaultPort} (gatewayPort).
     */
    private static List<Gateway> gateways(String list, int defaultPort) {
        if (list == null) {
            return List.of();
        }
        validPort("gatewayPort", defaultPort);
        List<Gateway> gateways = new ArrayList<>();
        for (String entry : list.split(",")) {
            String server = entry.strip();
            if (server.isEmpty()) {
                continue;
            }
            String host = server;
            String port = null;
            if (server.startsWith("[")) {
                int close = server.indexOf(']');
                if (close < 0 || (close + 1 < server.length() && server.charAt(close + 1) != ':')) {
                    throw new IllegalArgumentException("gateway '" + server + "' must be host, host:port or [IPv6]:port");
                }
                host = server.substring(1, close);
                port = close + 1 < server.length() ? server.substring(close + 2) : null;
            } else if (server.indexOf(':') >= 0 && server.indexOf(':') == server.lastIndexOf(':')) {
                host = server.substring(0, server.indexOf(':')).strip();
                port = server.substring(server.indexOf(':') + 1).strip();
            } // several colons without brackets: a bare IPv6 address
            int number = defaultPort;
            if (port != null) {
                try {
                    number = Integer.parseInt(port);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("gateway '" + server + "': port must be an integer, was '" + port + "'", e);
                }
            }
            gateways.add(new Gateway(host, number));
        }
        if (gateways.isEmpty()) {
            throw new IllegalArgumentException("gateway names no host: '" + list + "'");
        }
        return List.copyOf(gateways);
    }

    private static void validPort(String key, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(key + " must be a port between 1 and 65535, was " + port);
        }
    }

    private static void positive(String key, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(key + " must be at least 1, was " + value);
        }
    }

    private static String orElse(String value, String fallback) {
        return value == null ? fallback : value;
    }

    private static int integer(Function<String, String> p, String key, int fallback) {
        String value = p.apply(key);
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer, was '" + value + "'", e);
        }
    }

    private static Duration millis(Function<String, String> p, String key, long fallback) {
        long value = integer(p, key, (int) fallback);
        if (value < 0) {
            throw new IllegalArgumentException(key + " must not be negative, was " + value);
        }
        return Duration.ofMillis(value);
    }

    private static boolean bool(String key, String value) {
        if (value == null || value.equalsIgnoreCase("false")) {
            return false;
        }
        if (value.equalsIgnoreCase("true")) {
            return true;
        }
        throw new IllegalArgumentException(key + " must be true or false, was '" + value + "'");
    }

    private static double rate(String value) {
        if (value == null) {
            return 0;
        }
        try {
            double rate = Double.parseDouble(value);
            if (rate < 0 || Double.isNaN(rate) || Double.isInfinite(rate)) {
                throw new NumberFormatException("not a rate");
            }
            return rate;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("maxMessageRate must be a non-negative number of mails per second, was '" + value + "'", e);
        }
    }

    private static Set<String> domains(String list) {
        Set<String> domains = new LinkedHashSet<>();
        for (String domain : list.split(",")) {
            if (!domain.isBlank()) {
                domains.add(domain.strip().toLowerCase(Locale.ROOT));
            }
        }
        return Set.copyOf(domains);
    }

    private static List<Duration> delays(String list) {
        List<Duration> delays = new ArrayList<>();
        for (String delay : list.split(",")) {
            if (!delay.isBlank()) {
                try {
                    delays.add(Duration.ofMillis(Long.parseLong(delay.strip())));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("retryDelays must be milliseconds separated by commas, was '" + list + "'", e);
                }
            }
        }
        return List.copyOf(delays);
    }
}
