package org.jameskvs.james;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import javax.annotation.PreDestroy;

import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueInfo;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;

/**
 * The KVS queues this James node writes, each opened once in write mode and shared by every James
 * object that uses it (a queue has one writer: opening it twice at the same epoch from two
 * connections would be refused). Queue handles, repositories and webadmin calls come and go; the
 * KVS handles live until {@link #close()} at shutdown. Every handle shows its answers to the node's
 * {@link Fencing}, as do failed opens.
 */
public class KvsQueues implements AutoCloseable {
    private final KvsQueueOpener opener;
    private final KvsSpoolConfiguration configuration;
    private final Fencing fencing;
    /**
     * One open per queue at a time (a second write open of the same queue, e.g. of a replicated one,
     * would be refused as if another writer held it). A failed open is forgotten, so the next use
     * tries again.
     */
    private final Map<String, CompletableFuture<KvsQueue>> open = new ConcurrentHashMap<>();

    public KvsQueues(KvsQueueOpener opener, KvsSpoolConfiguration configuration) {
        this.opener = opener;
        this.configuration = configuration;
        this.fencing = new Fencing(configuration);
    }

    public KvsSpoolConfiguration configuration() {
        return configuration;
    }

    /** Whether another writer holds this node's queues (shared by everything this node writes). */
    public Fencing fencing() {
        return fencing;
    }

    /**
     * The handle of the named queue, creating the queue on the server if needed.
     *
     * @throws KvsException with the open's status when the queue cannot be opened
     */
    public KvsQueue get(String name) {
        CompletableFuture<KvsQueue> handle = open(name);
        try {
            return handle.get(configuration.requestTimeout().plus(Futures.MARGIN).toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof KvsException kvs ? kvs : new KvsException(Status.INTERNAL_ERROR, "open " + name, e.getCause());
        } catch (TimeoutException e) {
            throw new KvsException(Status.TIMEOUT, "open " + name);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KvsException(Status.TIMEOUT, "interrupted: open " + name);
        }
    }

    /**
     * The handle of the named queue without blocking: completes once the queue is open, or
     * exceptionally with a {@link KvsException} carrying the open's status.
     */
    public CompletableFuture<KvsQueue> open(String name) {
        CompletableFuture<KvsQueue> opened = open.get(name);
        if (opened != null && opened.isDone() && !opened.isCompletedExceptionally()) {
            return opened; // the common case, once per store and per delete: nothing to register
        }
        CompletableFuture<KvsQueue> handle = open.computeIfAbsent(name, this::openOnServer);
        // Outside computeIfAbsent: an open that failed at once must not remove itself inside it.
        handle.whenComplete((queue, failure) -> {
            if (failure != null) {
                open.remove(name, handle);
            }
        });
        return handle;
    }

    private CompletableFuture<KvsQueue> openOnServer(String name) {
        long epoch = configuration.epoch();
        return opener.open(name, OpenOptions.writer(configuration.ownerName(), epoch)).thenApply(result -> {
            if (!result.isOk()) {
                fencing.observe(name, epoch, result.status(), result.reason());
                throw new CompletionException(new KvsException(result.status(), "open " + name + ": " + result.reason()));
            }
            return new FenceDetectingQueue(result.queue(), result.epoch(), fencing);
        });
    }

    /**
     * Uses a write handle opened elsewhere for {@code name} from now on (the queues a returning node
     * takes back from its adopter, {@code org.jameskvs.james.cluster.NamespaceReclaim}), as if
     * {@link #open} had opened it at {@code epoch}.
     */
    public void useOpened(String name, KvsQueue queue, long epoch) {
        open.put(name, CompletableFuture.completedFuture(new FenceDetectingQueue(queue, epoch, fencing)));
    }

    /** The handle if this node already opened the queue; no server round trip. */
    public KvsQueue getIfOpen(String name) {
        CompletableFuture<KvsQueue> handle = open.get(name);
        return handle != null && handle.isDone() && !handle.isCompletedExceptionally() ? handle.join() : null;
    }

    /** Names of the queues on the server starting with {@code prefix}. */
    public List<String> existingNames(String prefix) {
        List<QueueInfo> queues = Futures.await(opener.listQueues(), configuration.requestTimeout(), "list queues")
            .orThrow();
        return queues.stream().map(QueueInfo::name).filter(name -> name.startsWith(prefix)).collect(Collectors.toList());
    }

    /** Releases the write handles (the queues and their mail stay on the server). */
    @PreDestroy
    @Override
    public void close() {
        // A handle still opening is closed once it is open.
        open.values().forEach(handle -> handle.thenAccept(KvsQueue::close));
        open.clear();
    }
}
