package org.jameskvs.app.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;

import org.apache.james.task.Task;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.cluster.ClusterWatch;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.junit.jupiter.api.Test;

/**
 * The adopt task's failure path, which the cluster IT cannot provoke: a claim that throws (here: a
 * node without replication, where adoption has no leases to work with) fails the task (PARTIAL, so
 * {@code GET /tasks/{id}} says failed) and its details say FAILED with the reason; the details'
 * JSON module carries every field. The success path is ClusterAdminIT's.
 */
class AdoptNamespaceTaskTest {
    private static final Instant NOW = Instant.parse("2026-11-24T06:00:00Z");

    @Test
    void aClaimThatThrowsFailsTheTaskWithItsReasonInTheDetails() {
        ClusterWatch single = new ClusterWatch(null, new KvsQueues(new NoServer(), KvsSpoolConfiguration.defaults()), null);
        AdoptNamespaceTask task = new AdoptNamespaceTask(single, "james-a", Clock.fixed(NOW, ZoneOffset.UTC));

        assertThat(task.details()).contains(new AdoptNamespaceTask.Details("james-a", "CLAIMING", 0, null, NOW));
        assertThat(task.run()).isEqualTo(Task.Result.PARTIAL);
        assertThat(task.details()).hasValueSatisfying(d -> {
            assertThat(d).isInstanceOf(AdoptNamespaceTask.Details.class);
            AdoptNamespaceTask.Details details = (AdoptNamespaceTask.Details) d;
            assertThat(details.state()).isEqualTo("FAILED");
            assertThat(details.endReason()).contains("replication.nodes");
        });
        assertThat(task.type().asString()).isEqualTo("kvs-adopt-namespace");
    }

    @Test
    void theDetailsModuleCarriesEveryField() {
        AdoptNamespaceTask.Details details = new AdoptNamespaceTask.Details("james-a", "MOVING", 42, "", NOW);
        AdoptNamespaceTaskDetailsDTO dto = AdoptNamespaceTaskDetailsDTO.module().toDTO(details);

        assertThat(dto.getType()).isEqualTo("kvs-adopt-namespace");
        assertThat(dto.getNamespace()).isEqualTo("james-a");
        assertThat(dto.getState()).isEqualTo("MOVING");
        assertThat(dto.getMoved()).isEqualTo(42);
        assertThat(dto.getTimestamp()).isEqualTo(NOW);
        assertThat(AdoptNamespaceTaskDetailsDTO.module().getToDomainObjectConverter().convert(dto)).isEqualTo(details);
    }

    /** Never called: the claim is refused before any queue is opened. */
    private static final class NoServer implements KvsQueueOpener {
        @Override
        public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
            throw new AssertionError("no queue is opened");
        }

        @Override
        public CompletableFuture<ListResult> listQueues() {
            throw new AssertionError("no queue is listed");
        }
    }
}
