package org.jameskvs.server;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Properties;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;

/** Tests of the server's metrics: a server with its Prometheus endpoint on a free port, a client, a scrape. */
final class MeteredServer {
    private MeteredServer() {
    }

    static KvsServer start(Path dir, String password) {
        Properties p = ServerConfig.testProperties(dir, password);
        p.setProperty("metrics.enabled", "true");
        p.setProperty("metrics.port", "0");
        return KvsServer.start(ServerConfig.fromProperties(p));
    }

    static KvsClient client(KvsServer server, String password) {
        return KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(server.port())
                .credentials("james", password).build());
    }

    /** The value of the series {@code name{queue="queue"}}; fails naming the scrape when it is absent. */
    static double queueMetric(KvsServer server, String name, String queue) throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        String prefix = name + "{queue=\"" + queue + "\"} ";
        for (String line : body.split("\n")) {
            if (line.startsWith(prefix)) {
                return Double.parseDouble(line.substring(prefix.length()));
            }
        }
        throw new AssertionError("no " + prefix.trim() + " in:\n" + body);
    }
}
