package org.jameskvs.james;

import java.util.concurrent.CompletableFuture;

import javax.annotation.PreDestroy;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/** The single-server {@link KvsQueueOpener}: one {@link KvsClient} connection to the first configured server. */
public final class KvsClientOpener implements KvsQueueOpener, AutoCloseable {
    private final KvsClient client;

    public KvsClientOpener(KvsClient client) {
        this.client = client;
    }

    /** Connects (blocking) to {@code servers[0]} with the configured credentials, TLS and limits. */
    public static KvsClientOpener connect(KvsSpoolConfiguration configuration) {
        String server = configuration.servers().get(0);
        int colon = server.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("kvs-spool: server '" + server + "' is not host:port");
        }
        KvsClientConfig config = KvsClientConfig.builder()
            .host(server.substring(0, colon))
            .port(Integer.parseInt(server.substring(colon + 1)))
            .credentials(configuration.user(), configuration.password())
            .tls(configuration.tls())
            .maxInFlight(configuration.maxInFlight())
            // Answers carrying the largest mail (READ, GET) are frames about that large too.
            .maxFrameBytes(configuration.frameMaxBytes())
            .requestTimeout(configuration.requestTimeout())
            .build();
        return new KvsClientOpener(KvsClient.connect(config));
    }

    @Override
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        return client.open(name, options);
    }

    @Override
    public CompletableFuture<ListResult> listQueues() {
        return client.listQueues();
    }

    @PreDestroy
    @Override
    public void close() {
        client.close();
    }
}
