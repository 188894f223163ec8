package org.jameskvs.server.metrics;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Serves {@code GET /metrics} in Prometheus text format on its own small thread (the JDK's HTTP
 * server), so a scrape never touches the protocol event loop.
 */
public final class PrometheusEndpoint implements AutoCloseable {
    private final HttpServer http;

    public PrometheusEndpoint(ServerMetrics metrics, String host, int port) {
        try {
            http = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot bind metrics endpoint " + host + ":" + port, e);
        }
        http.createContext("/metrics", exchange -> {
            byte[] body = metrics.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        http.start();
    }

    public int port() {
        return http.getAddress().getPort();
    }

    public InetSocketAddress address() {
        return http.getAddress();
    }

    @Override
    public void close() {
        http.stop(0);
    }
}
