package org.jameskvs.app.cluster;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.james.task.Task;
import org.apache.james.task.TaskExecutionDetails;
import org.apache.james.task.TaskType;
import org.jameskvs.james.cluster.AdoptionView;
import org.jameskvs.james.cluster.ClusterWatch;

/**
 * {@code PUT /kvs/cluster/adoptions/{namespace}} as a James task: the claim waits for two lease
 * renewals of the namespace's writer (seconds), so the route answers 201 with a task id at once and
 * {@code GET /tasks/{id}} follows it. The task completes once the namespace is claimed (moving the
 * mail then runs on, see {@code GET /kvs/cluster/adoptions}); it fails when another node holds the
 * claim or the claim threw. Its details name the namespace and the adoption's state (CLAIMING while
 * the claim runs, then as {@code GET /kvs/cluster/adoptions} shows it; FAILED with the reason when
 * the claim threw).
 */
public class AdoptNamespaceTask implements Task {
    public static final TaskType TYPE = TaskType.of("kvs-adopt-namespace");

    private final ClusterWatch cluster;
    private final String namespace;
    private final Clock clock;
    private final AtomicReference<AdoptionView> outcome = new AtomicReference<>();
    /** Why the claim threw (null: it did not); shown as state FAILED. */
    private volatile String failure;

    public AdoptNamespaceTask(ClusterWatch cluster, String namespace, Clock clock) {
        this.cluster = cluster;
        this.namespace = namespace;
        this.clock = clock;
    }

    @Override
    public Result run() {
        try {
            AdoptionView view = cluster.adoptNow(namespace);
            outcome.set(view);
            if (view.state().equals("ENDED")) {
                LOGGER.warn("namespace {} not adopted: {}", namespace, view.endReason());
                return Result.PARTIAL;
            }
            return Result.COMPLETED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "interrupted";
            return Result.PARTIAL;
        } catch (Exception e) {
            LOGGER.error("adopting namespace {} failed", namespace, e);
            failure = String.valueOf(e.getMessage());
            return Result.PARTIAL;
        }
    }

    @Override
    public TaskType type() {
        return TYPE;
    }

    @Override
    public Optional<TaskExecutionDetails.AdditionalInformation> details() {
        AdoptionView view = outcome.get();
        if (view == null) {
            return Optional.of(new Details(namespace, failure == null ? "CLAIMING" : "FAILED", 0, failure, clock.instant()));
        }
        return Optional.of(new Details(namespace, view.state(), view.moved(), view.endReason(), clock.instant()));
    }

    /** What {@code GET /tasks/{id}} shows as {@code additionalInformation} (see {@link AdoptNamespaceTaskDetailsDTO}). */
    public record Details(String namespace, String state, long moved, String endReason, Instant timestamp)
        implements TaskExecutionDetails.AdditionalInformation {
    }
}
