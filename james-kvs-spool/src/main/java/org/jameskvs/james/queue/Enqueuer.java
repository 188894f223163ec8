package org.jameskvs.james.queue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores the copies enqueued into one James queue: opens the level's KVS queue, PUTs, and retries
 * what its kind of queue allows.
 * <ul>
 * <li><b>Intake queue</b> (its enqueue answers an SMTP client): a refusal or an unknown outcome fails
 *   the enqueue, so the client gets a 4xx and keeps the mail. Only BAD_HANDLE (certainly not applied:
 *   the queue is being re-opened) is retried, up to {@code requestTimeout}. A fenced node fails it at
 *   once.</li>
 * <li><b>Any other queue</b> (the mail was answered 250 already): whatever the state of the store
 *   explains is retried without a deadline, opening the queue included: unreachable, being restored,
 *   too few copies, full, busy, a queue that cannot be created yet. Failing would send the mail to
 *   James's error processor, which is for errors of the mail itself; those still fail at once (a mail
 *   too big for a frame, a malformed request). A wait longer than {@code acceptedMailRetryTimeout} is
 *   logged once per mail and counted ({@link OverdueEnqueues}, shown by the health check). On a fenced
 *   node the PUT is not retried: the enqueue waits, the mail staying where it is (in the queue James
 *   read it from, not yet done), until James stops.</li>
 * </ul>
 * When James stops ({@link #stop()}), waiting enqueues of accepted mail end with
 * {@link EnqueueAbandonedAtShutdown}, which James's mail processing lets through untouched.
 *
 * <p>A retry after an unknown outcome may find the first attempt stored, so retries replace by id
 * (same id, same content): the mail is stored once whatever happened.
 */
final class Enqueuer {
    private static final Logger LOGGER = LoggerFactory.getLogger(Enqueuer.class);
    private static final long FIRST_BACKOFF_MILLIS = 50;
    private static final long MAX_BACKOFF_MILLIS = 1000;

    private final String queueName;
    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final Fencing fencing;
    private final OverdueEnqueues overdue;
    private final boolean intake;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    Enqueuer(String queueName, PriorityLevels levels, KvsSpoolConfiguration configuration, Fencing fencing,
             OverdueEnqueues overdue) {
        this.queueName = queueName;
        this.levels = levels;
        this.configuration = configuration;
        this.fencing = fencing;
        this.overdue = overdue;
        this.intake = configuration.isIntakeQueue(queueName);
    }

    /**
     * Stores one copy. Completes with the last answer (OK: stored), or exceptionally with
     * {@link EnqueueAbandonedAtShutdown} when James stopped while accepted mail was waiting.
     */
    CompletableFuture<Ack> store(String mailName, byte[] id, int level, long notBefore, byte[] body) {
        long now = System.nanoTime();
        Attempts attempts = new Attempts(mailName, id, level, notBefore, body, now,
            now + (intake ? configuration.requestTimeout() : configuration.acceptedMailRetryTimeout()).toNanos());
        attempts.next();
        return attempts.result;
    }

    /** James is stopping: waiting enqueues end, no retry starts. */
    void stop() {
        stopped.complete(null);
    }

    /**
     * One copy's attempts. Each attempt starts the next one itself (no chain of futures grows while
     * a mail waits, however long); the outcome completes {@link #result}.
     */
    private final class Attempts {
        final CompletableFuture<Ack> result = new CompletableFuture<>();
        private final String mailName;
        private final byte[] id;
        private final int level;
        private final long notBefore;
        private final byte[] body;
        private final long startedAt;
        /** Intake: the last retry. Accepted mail: when the wait is reported as overdue. */
        private final long limitAt;
        private long backoffMillis = FIRST_BACKOFF_MILLIS;
        private int retries;
        private boolean putSent;
        private boolean reportedOverdue;

        Attempts(String mailName, byte[] id, int level, long notBefore, byte[] body, long startedAt, long limitAt) {
            this.mailName = mailName;
            this.id = id;
            this.level = level;
            this.notBefore = notBefore;
            this.body = body;
            this.startedAt = startedAt;
            this.limitAt = limitAt;
        }

        void next() {
            if (stopped.isDone()) {
                if (intake) {
                    finish(Ack.failed(Status.SHUTTING_DOWN, "James is stopping"));
                } else {
                    abandon("James is stopping");
                }
                return;
            }
            if (fencing.isFenced()) {
                fenced();
                return;
            }
            levels.open(level)
                .thenCompose(this::put)
                .exceptionally(Attempts::openFailure)
                .thenAccept(this::onAnswer)
                .whenComplete((any, bug) -> {
                    if (bug != null) {
                        result.completeExceptionally(bug);
                    }
                });
        }

        private CompletableFuture<Ack> put(KvsQueue queue) {
            boolean replace = putSent;
            putSent = true;
            return replace ? queue.putReplacing(id, level, notBefore, new byte[0], body)
                : queue.put(id, level, notBefore, new byte[0], body);
        }

        private static Ack openFailure(Throwable failure) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            return cause instanceof KvsException kvs ? Ack.failed(kvs.status(), kvs.getMessage())
                : Ack.failed(Status.INTERNAL_ERROR, "cannot open the queue: " + cause);
        }

        private void onAnswer(Ack ack) {
            if (ack.isOk() || !isRetryable(ack.status())) {
                finish(ack);
                return;
            }
            if (fencing.isFenced()) {
                fenced();
                return;
            }
            long now = System.nanoTime();
            if (intake && now + TimeUnit.MILLISECONDS.toNanos(backoffMillis) > limitAt) {
                finish(ack);
                return;
            }
            if (!intake && !reportedOverdue && now >= limitAt) {
                reportedOverdue = true;
                overdue.started();
                LOGGER.warn("Queue {}: accepted mail {} has waited {} s for the KVS store (last answer: {} {});"
                    + " it stays in the queue James read it from and the enqueue keeps retrying",
                    queueName, mailName, TimeUnit.NANOSECONDS.toSeconds(now - startedAt), ack.status(), ack.reason());
            }
            LOGGER.debug("Queue {}: PUT {} answered {} ({}), retrying in {} ms", queueName, MessageIds.asString(id),
                ack.status(), ack.reason(), backoffMillis);
            long pause = backoffMillis;
            backoffMillis = Math.min(backoffMillis * 2, MAX_BACKOFF_MILLIS);
            retries++;
            CompletableFuture.delayedExecutor(pause, TimeUnit.MILLISECONDS).execute(this::next);
        }

        private boolean isRetryable(Status status) {
            if (Fencing.showsAnotherWriter(status)) {
                return true; // fenced: handled in onAnswer (intake fails, accepted mail waits)
            }
            if (intake) {
                return status == Status.BAD_HANDLE;
            }
            return switch (status) {
                // Errors of the request itself (the mail): retrying would get the same answer.
                case FRAME_TOO_LARGE, BAD_REQUEST, UNKNOWN_OPCODE, DUPLICATE_ID, READ_ONLY -> false;
                default -> true;
            };
        }

        /** The node is fenced: intake fails now; accepted mail waits, in place, until James stops. */
        private void fenced() {
            String cause = fencing.cause().orElse("fenced");
            if (intake) {
                finish(Ack.failed(Status.STALE_EPOCH, "this James node is fenced: " + cause));
                return;
            }
            LOGGER.info("Queue {}: mail {} not enqueued: this James node is fenced; it stays in the queue James read"
                + " it from until James stops", queueName, mailName);
            stopped.thenRun(() -> abandon("this James node is fenced and James is stopping"));
        }

        private void abandon(String why) {
            endOverdue();
            result.completeExceptionally(new EnqueueAbandonedAtShutdown(queueName, mailName, why));
        }

        private void finish(Ack ack) {
            endOverdue();
            if (retries > 0) {
                LOGGER.info("Queue {}: PUT {} {} after {} retries: {} {}", queueName, MessageIds.asString(id),
                    ack.isOk() ? "stored" : "failed", retries, ack.status(), ack.isOk() ? "" : ack.reason());
            }
            result.complete(ack);
        }

        private void endOverdue() {
            if (reportedOverdue) {
                reportedOverdue = false;
                overdue.ended();
            }
        }
    }
}
