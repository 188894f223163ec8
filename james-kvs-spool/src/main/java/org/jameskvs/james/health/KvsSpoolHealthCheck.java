package org.jameskvs.james.health;

import javax.inject.Inject;

import org.apache.james.core.healthcheck.ComponentName;
import org.apache.james.core.healthcheck.HealthCheck;
import org.apache.james.core.healthcheck.Result;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.jameskvs.james.queue.OverdueEnqueues;
import org.reactivestreams.Publisher;

import reactor.core.publisher.Mono;

/**
 * The KVS spool in James's health checks ({@code GET /healthcheck} on webadmin, and the periodical
 * checks): unhealthy once the node is fenced (another writer holds its queues: it refuses mail and
 * delivers none until restarted, see {@link Fencing}); degraded while accepted mail has waited for
 * the store longer than {@code acceptedMailRetryTimeout}; healthy otherwise. It only reads state the
 * spool keeps anyway: a check sends nothing to the KVS servers.
 */
public class KvsSpoolHealthCheck implements HealthCheck {
    public static final ComponentName COMPONENT_NAME = new ComponentName("KVS spool");

    private final Fencing fencing;
    private final OverdueEnqueues overdueEnqueues;

    @Inject
    public KvsSpoolHealthCheck(KvsQueues queues, KvsMailQueueFactory factory) {
        this(queues.fencing(), factory.overdueEnqueues());
    }

    public KvsSpoolHealthCheck(Fencing fencing, OverdueEnqueues overdueEnqueues) {
        this.fencing = fencing;
        this.overdueEnqueues = overdueEnqueues;
    }

    @Override
    public ComponentName componentName() {
        return COMPONENT_NAME;
    }

    @Override
    public Publisher<Result> check() {
        return Mono.fromSupplier(this::result);
    }

    private Result result() {
        if (fencing.isFenced()) {
            return Result.unhealthy(COMPONENT_NAME, "fenced, mail intake and delivery stopped: " + fencing.cause().orElse(""));
        }
        int overdue = overdueEnqueues.count();
        if (overdue > 0) {
            return Result.degraded(COMPONENT_NAME, overdue + " accepted mail(s) waiting for the KVS store longer than"
                + " acceptedMailRetryTimeout (kept and retried)");
        }
        return Result.healthy(COMPONENT_NAME);
    }
}
