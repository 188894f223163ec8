package org.jameskvs.james;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jameskvs.client.KvsException;
import org.jameskvs.protocol.Status;

/**
 * Blocking on KVS futures for James's blocking APIs. The client times requests out itself; the
 * extra margin here only guards against a future that never completes.
 */
public final class Futures {
    static final Duration MARGIN = Duration.ofSeconds(5);

    private Futures() {
    }

    public static <T> T await(CompletableFuture<T> future, Duration timeout, String what) {
        try {
            return future.get(timeout.plus(MARGIN).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KvsException(Status.TIMEOUT, "interrupted: " + what);
        } catch (TimeoutException e) {
            throw new KvsException(Status.TIMEOUT, what);
        } catch (ExecutionException e) {
            throw new KvsException(Status.INTERNAL_ERROR, what + ": " + e.getCause());
        }
    }
}
