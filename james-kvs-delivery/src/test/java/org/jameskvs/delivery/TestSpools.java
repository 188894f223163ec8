package org.jameskvs.delivery;

import java.time.Clock;
import java.util.List;

import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.apache.james.queue.memory.MemoryMailQueueFactory;
import org.jameskvs.delivery.target.DomainSmtpTarget;

/** Lanes in the test JVM: James's in-memory queues (unless given), MX lookups answered by the target. */
final class TestSpools {
    private TestSpools() {
    }

    static MailQueueFactory<?> memoryQueues() {
        return new MemoryMailQueueFactory(new RawMailQueueItemDecoratorFactory());
    }

    static MxResolver resolverOf(DomainSmtpTarget target) {
        return domain -> List.of(target.domain(domain).address());
    }

    static LaneSpool start(LaneDeliveryConfig config, DomainSmtpTarget target, Bouncer bouncer, LaneRegistry registry) {
        return start(config, memoryQueues(), target, bouncer, registry);
    }

    static LaneSpool start(LaneDeliveryConfig config, MailQueueFactory<?> queues, DomainSmtpTarget target, Bouncer bouncer,
                           LaneRegistry registry) {
        return new LaneSpool(config, queues, resolverOf(target), bouncer, registry, Clock.systemUTC());
    }
}
