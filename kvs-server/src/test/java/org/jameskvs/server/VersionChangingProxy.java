package org.jameskvs.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A TCP relay to a server for one client connection that rewrites the version byte of the client's
 * first frame (stream offset 4): the real client library then speaks, as far as the server can
 * tell, another protocol version. Everything else passes unchanged both ways.
 */
final class VersionChangingProxy implements AutoCloseable {
    private static final int VERSION_BYTE = 4;

    private final ServerSocket listener;
    private final int serverPort;
    private final byte version;
    private final Thread acceptor;
    private volatile Socket client;
    private volatile Socket server;

    VersionChangingProxy(int serverPort, byte version) throws IOException {
        this.listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        this.serverPort = serverPort;
        this.version = version;
        this.acceptor = new Thread(this::relayOne, "version-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    private void relayOne() {
        try {
            client = listener.accept();
            server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
            Thread back = new Thread(() -> copy(server, client, false), "version-proxy-back");
            back.setDaemon(true);
            back.start();
            copy(client, server, true);
        } catch (IOException e) {
            // closed by the test
        }
    }

    private void copy(Socket from, Socket to, boolean rewrite) {
        byte[] buffer = new byte[8192];
        long offset = 0;
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                if (rewrite && offset <= VERSION_BYTE && offset + n > VERSION_BYTE) {
                    buffer[(int) (VERSION_BYTE - offset)] = version;
                }
                offset += n;
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed: the relay ends
        } finally {
            closeQuietly(to);
        }
    }

    private static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        closeQuietly(client);
        closeQuietly(server);
    }
}
