package org.jameskvs.app.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;

/** Free loopback ports and waiting for one to accept connections. */
final class FreePorts {
    private FreePorts() {
    }

    static int next() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Waits until the port accepts connections or {@code process} exits or {@code timeout} passes. */
    static boolean awaitAccepting(int port, Process process, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (accepts(port)) {
                return true;
            }
            if (process != null && !process.isAlive()) {
                return false;
            }
            Thread.sleep(200);
        }
        return false;
    }
}
