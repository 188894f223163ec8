package org.jameskvs.server;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** A free loopback port for a server process's metrics endpoint. */
final class ServerProcessPorts {
    private ServerProcessPorts() {
    }

    static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
