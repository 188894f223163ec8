package org.jameskvs.james;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import javax.annotation.PreDestroy;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueInfo;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/**
 * The KVS queues this James node writes, each opened once in write mode and shared by every James
 * object that uses it (a queue has one writer: opening it twice at the same epoch from two
 * connections would be refused). Queue handles, repositories and webadmin calls come and go; the
 * KVS handles live until {@link #close()} at shutdown.
 */
public class KvsQueues implements AutoCloseable {
    private final KvsQueueOpener opener;
    private final KvsSpoolConfiguration configuration;
    private final Map<String, KvsQueue> open = new ConcurrentHashMap<>();

    public KvsQueues(KvsQueueOpener opener, KvsSpoolConfiguration configuration) {
        this.opener = opener;
        this.configuration = configuration;
    }

    public KvsSpoolConfiguration configuration() {
        return configuration;
    }

    /** The handle of the named queue, creating the queue on the server if needed. */
    public KvsQueue get(String name) {
        return open.computeIfAbsent(name, this::openNow);
    }

    /** The handle if this node already opened the queue; no server round trip. */
    public KvsQueue getIfOpen(String name) {
        return open.get(name);
    }

    /** Names of the queues on the server starting with {@code prefix}. */
    public List<String> existingNames(String prefix) {
        List<QueueInfo> queues = Futures.await(opener.listQueues(), configuration.requestTimeout(), "list queues")
            .orThrow();
        return queues.stream().map(QueueInfo::name).filter(name -> name.startsWith(prefix)).collect(Collectors.toList());
    }

    private KvsQueue openNow(String name) {
        OpenOptions options = OpenOptions.writer(configuration.ownerName(), configuration.epoch());
        OpenResult result = Futures.await(opener.open(name, options), configuration.requestTimeout(), "open " + name);
        return result.orThrow();
    }

    /** Releases the write handles (the queues and their mail stay on the server). */
    @PreDestroy
    @Override
    public void close() {
        open.values().forEach(KvsQueue::close);
        open.clear();
    }
}
