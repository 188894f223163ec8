package org.jameskvs.james;

import java.util.concurrent.CompletableFuture;

import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;

/**
 * Where the James adapter gets its KVS queues from. A {@code KvsClient} satisfies it
 * ({@code client::open}, {@code client::listQueues}); so will the replication layer (every queue on
 * two server nodes). The adapter knows nothing else about the servers, so replication can change
 * without touching it.
 */
public interface KvsQueueOpener {

    /** Opens (creating if absent) a queue. Completes with a status, never exceptionally. */
    CompletableFuture<OpenResult> open(String name, OpenOptions options);

    /** The queues that exist: used to find the James queues created before a restart. */
    CompletableFuture<ListResult> listQueues();
}
