package org.jameskvs.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

/** Free loopback ports, and waiting for one to accept connections. */
public final class FreePorts {
    /**
     * Every port this JVM handed out: a port is never given twice, since the process it went to
     * may bind it only later (seen: James's webadmin failing "Address already in use" on a port
     * drawn again for another process of the same test).
     */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** How many blocks the port range is cut into: at most this many test JVMs can run side by side. */
    static final int FORK_BLOCKS = 4;

    /**
     * The system property naming this test JVM's fork number (1, 2, ...; the build passes surefire's
     * {@code ${surefire.forkNumber}}). Absent or not a number: block 0.
     */
    public static final String FORK_NUMBER_PROPERTY = "kvs.test.forkNumber";

    private FreePorts() {
    }

    /** This JVM's block of the port range: its fork number minus one, modulo {@link #FORK_BLOCKS}. */
    static int forkBlock() {
        try {
            return Math.floorMod(Integer.parseInt(System.getProperty(FORK_NUMBER_PROPERTY, "1").trim()) - 1, FORK_BLOCKS);
        } catch (NumberFormatException unset) {
            return 0;
        }
    }

    /**
     * A free loopback port below the kernel's ephemeral range, so that a process can restart on it. A
     * port the kernel hands out for {@code bind(0)} comes from that range, where any outgoing
     * connection may take it as its local port while the process is down, and the restart on it then
     * fails (seen: "Address already in use" on a kill -9 restart).
     */
    public static int next() {
        int ephemeralLow = 32768;
        try {
            ephemeralLow = Integer.parseInt(Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                .trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException notLinux) {
            // keep Linux's default
        }
        // Test JVMs running side by side (surefire's forkCount > 1) each draw from a block of their own:
        // the set above is per JVM, and another JVM's process may not have bound its port yet.
        int blockSpan = Math.max(1_000, ephemeralLow - 10_000) / FORK_BLOCKS;
        int base = 10_000 + forkBlock() * blockSpan;
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = base + ThreadLocalRandom.current().nextInt(blockSpan);
            if (HANDED_OUT.contains(port)) {
                continue; // free now, but given to a process of this run that may not have bound it yet
            }
            try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                HANDED_OUT.add(port);
                return port;
            } catch (IOException inUse) {
                // another one
            }
        }
        throw new UncheckedIOException(new IOException("no free port in " + base + ".." + (base + blockSpan)));
    }

    /** Whether something accepts TCP connections on the loopback {@code port} (within half a second). */
    public static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Waits until the port accepts connections or {@code process} (may be null) exits or {@code timeout} passes. */
    public static boolean awaitAccepting(int port, Process process, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (accepts(port)) {
                return true;
            }
            if (process != null && !process.isAlive()) {
                return false;
            }
            Thread.sleep(100);
        }
        return false;
    }
}
