package org.jameskvs.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Network namespaces for the network-fault scenarios (needs root and {@code ip}). Two network
 * segments, as in the paper (active and standby path in different segments): bridges
 * {@code kvsfa} (10.200.1.1/24) and {@code kvsfb} (10.200.2.1/24) in the root namespace, where the
 * writer runs. Node {@code i} runs in namespace {@code kvsf<i>} with one veth on each bridge:
 * 10.200.1.(10+i) and 10.200.2.(10+i). Root-side veth ends are {@code kvfa<i>} / {@code kvfb<i>}.
 * Only these addresses and names are touched; {@link #cleanup()} removes them (idempotent).
 *
 * <p>Faults: a segment's link down (partition of one path), both down (client-node partition),
 * {@code tbf} rate limit (slow link), random drops with iptables' {@code statistic} match in the
 * node's namespace (lossy link). {@code netem} is used when the kernel has it (delay), else not.
 */
public final class NetLab implements AutoCloseable {
    public static final String PREFIX = "kvsf";
    private final int nodes;

    private NetLab(int nodes) {
        this.nodes = nodes;
    }

    /** Null if namespaces can be created here, else why not. */
    public static String unavailableReason() {
        try {
            if (!"root".equals(System.getProperty("user.name"))) {
                return "not root (user " + System.getProperty("user.name") + ")";
            }
            Result r = run("ip", "netns", "add", PREFIX + "probe");
            if (r.code != 0) {
                return "ip netns add failed: " + r.out.trim();
            }
            Result br = run("ip", "link", "add", PREFIX + "probebr", "type", "bridge");
            run("ip", "link", "del", PREFIX + "probebr");
            run("ip", "netns", "del", PREFIX + "probe");
            if (br.code != 0) {
                return "ip link add type bridge failed: " + br.out.trim();
            }
            return null;
        } catch (Exception e) {
            return "cannot run ip: " + e;
        }
    }

    /** Whether the kernel offers the netem qdisc (delay/loss); it may lack the module. */
    public static boolean hasNetem() {
        try {
            run("ip", "netns", "add", PREFIX + "probe");
            Result r = run("ip", "netns", "exec", PREFIX + "probe", "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                    "delay", "1ms");
            run("ip", "netns", "del", PREFIX + "probe");
            return r.code == 0;
        } catch (Exception e) {
            return false;
        }
    }

    /** Creates the bridges and {@code nodes} namespaces (after a cleanup of leftovers). */
    public static NetLab create(int nodes) throws IOException, InterruptedException {
        cleanup();
        for (String seg : List.of("a", "b")) {
            String br = PREFIX + seg;
            must("ip", "link", "add", br, "type", "bridge");
            must("ip", "addr", "add", "10.200." + segNo(seg) + ".1/24", "dev", br);
            must("ip", "link", "set", br, "up");
        }
        for (int i = 1; i <= nodes; i++) {
            String ns = ns(i);
            must("ip", "netns", "add", ns);
            must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
            for (String seg : List.of("a", "b")) {
                String host = "kvf" + seg + i;
                String peer = host + "p";
                must("ip", "link", "add", host, "type", "veth", "peer", "name", peer);
                must("ip", "link", "set", peer, "netns", ns);
                must("ip", "netns", "exec", ns, "ip", "link", "set", peer, "name", "eth" + seg);
                must("ip", "netns", "exec", ns, "ip", "addr", "add", "10.200." + segNo(seg) + "." + (10 + i) + "/24",
                        "dev", "eth" + seg);
                must("ip", "netns", "exec", ns, "ip", "link", "set", "eth" + seg, "up");
                must("ip", "link", "set", host, "master", PREFIX + seg);
                must("ip", "link", "set", host, "up");
            }
        }
        return new NetLab(nodes);
    }

    private static int segNo(String seg) {
        return seg.equals("a") ? 1 : 2;
    }

    public static String ns(int i) {
        return PREFIX + i;
    }

    public static String activeAddress(int i) {
        return "10.200.1." + (10 + i);
    }

    public static String standbyAddress(int i) {
        return "10.200.2." + (10 + i);
    }

    /** Takes node {@code i}'s link on segment a (active) or b (standby) down or up (root side). */
    public void link(int i, String seg, boolean up) throws IOException, InterruptedException {
        must("ip", "link", "set", "kvf" + seg + i, up ? "up" : "down");
    }

    /** Limits node {@code i}'s links (both directions, both segments) to {@code rate} with tbf. */
    public void slow(int i, String rate) throws IOException, InterruptedException {
        for (String seg : List.of("a", "b")) {
            must("tc", "qdisc", "replace", "dev", "kvf" + seg + i, "root", "tbf", "rate", rate, "burst", "8kb",
                    "latency", "500ms");
            must("ip", "netns", "exec", ns(i), "tc", "qdisc", "replace", "dev", "eth" + seg, "root", "tbf", "rate",
                    rate, "burst", "8kb", "latency", "500ms");
        }
    }

    /** Adds {@code delayMs} of delay with netem where the kernel has it. @return whether it worked */
    public boolean delay(int i, int delayMs) throws IOException, InterruptedException {
        boolean ok = true;
        for (String seg : List.of("a", "b")) {
            ok &= run("ip", "netns", "exec", ns(i), "tc", "qdisc", "replace", "dev", "eth" + seg, "root", "netem",
                    "delay", delayMs + "ms").code == 0;
        }
        return ok;
    }

    /** Removes rate limits and delays on node {@code i}. */
    public void unshape(int i) throws IOException, InterruptedException {
        for (String seg : List.of("a", "b")) {
            run("tc", "qdisc", "del", "dev", "kvf" + seg + i, "root");
            run("ip", "netns", "exec", ns(i), "tc", "qdisc", "del", "dev", "eth" + seg, "root");
        }
    }

    /** Drops {@code percent}% of TCP segments at random, both directions, in node {@code i}'s namespace. */
    public void lossy(int i, int percent) throws IOException, InterruptedException {
        String p = String.valueOf(percent / 100.0);
        for (String chain : List.of("INPUT", "OUTPUT")) {
            must("ip", "netns", "exec", ns(i), "iptables", "-A", chain, "-p", "tcp", "-m", "statistic", "--mode",
                    "random", "--probability", p, "-j", "DROP");
        }
    }

    public void lossless(int i) throws IOException, InterruptedException {
        run("ip", "netns", "exec", ns(i), "iptables", "-F");
    }

    /** Every node's links up, unshaped and lossless: what a scenario starts from, whatever the one before it left. */
    public void clearFaults() throws IOException, InterruptedException {
        for (int i = 1; i <= nodes; i++) {
            link(i, "a", true);
            link(i, "b", true);
            unshape(i);
            lossless(i);
        }
    }

    /** Removes every namespace, bridge and veth this class creates (idempotent; errors ignored). */
    public static void cleanup() throws IOException, InterruptedException {
        Result list = run("ip", "netns", "list");
        for (String line : list.out.split("\n")) {
            String name = line.trim().split("\\s+")[0];
            if (name.startsWith(PREFIX)) {
                run("ip", "netns", "del", name);
            }
        }
        Result links = run("ip", "-o", "link", "show");
        for (String line : links.out.split("\n")) {
            String[] parts = line.split(":\\s+");
            if (parts.length > 1) {
                String dev = parts[1].split("@")[0];
                if (dev.startsWith(PREFIX) || dev.startsWith("kvfa") || dev.startsWith("kvfb")) {
                    run("ip", "link", "del", dev);
                }
            }
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        cleanup();
    }

    public int nodes() {
        return nodes;
    }

    record Result(int code, String out) {
    }

    static Result run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, "timeout: " + String.join(" ", cmd));
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    static void must(String... cmd) throws IOException, InterruptedException {
        Result r = run(cmd);
        if (r.code != 0) {
            throw new IOException(String.join(" ", cmd) + " -> " + r.code + ": " + r.out.trim());
        }
    }

    /** A node process inside namespace {@code i}, listening on all its addresses. */
    public NodeProcess node(String name, java.nio.file.Path dir, int i, int port, String... extraProps) {
        return new NodeProcess(name, dir, ns(i), activeAddress(i), standbyAddress(i), port, "0.0.0.0",
                new ArrayList<>(List.of(extraProps)));
    }
}
