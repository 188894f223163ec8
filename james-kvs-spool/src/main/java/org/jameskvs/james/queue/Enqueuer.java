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
 * Writes one James queue's mail into its KVS queues: stores the copies enqueued, deletes the ones
 * done; opens the level's KVS queue first, and retries what the kind of write allows.
 * <ul>
 * <li><b>Intake enqueue</b> (into an intake queue, by a caller that answers a client still holding
 *   the mail: SMTP, JMAP; see {@code intakeCallers}): a refusal or an unknown outcome fails the
 *   enqueue, so the client gets a 4xx and keeps the mail. Only BAD_HANDLE (certainly not applied:
 *   the queue is being re-opened) is retried, up to {@code requestTimeout}. A fenced node fails it at
 *   once.</li>
 * <li><b>Any other enqueue</b> (the mail was answered 250 already, and James holds it alone: RemoteDelivery's
 *   {@code outgoing}, but also James's own re-enqueues into the intake queue) and <b>every delete</b> of a
 *   mail done: whatever the state of the store explains is retried without a deadline, opening the
 *   queue included: unreachable, being restored, too few copies, full, busy, a queue that cannot be
 *   created yet. Failing would send the mail to James's error processor, which is for errors of the
 *   mail itself, or make the spooler reject (delete) the mail it took from its queue; errors of the
 *   mail itself still fail at once (a mail too big for a frame, a malformed request). A wait longer
 *   than {@code acceptedMailRetryTimeout} is logged once per mail and counted ({@link OverdueEnqueues},
 *   shown by the health check). On a fenced node a store is not retried: it waits, the mail staying
 *   where it is (in the queue James read it from, not yet done), until James stops; a delete ends at
 *   once with STALE_EPOCH (the mail is left for the queue's new owner).</li>
 * </ul>
 * When James stops ({@link #stop()}), waiting writes of accepted mail end with
 * {@link EnqueueAbandonedAtShutdown}, which James's mail processing lets through untouched.
 *
 * <p>A retry after an unknown outcome may find the first attempt stored, so retries replace by id
 * (same id, same content): the mail is stored once whatever happened. A delete retried after it was
 * applied answers NOT_FOUND: done.
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
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    Enqueuer(String queueName, PriorityLevels levels, KvsSpoolConfiguration configuration, Fencing fencing,
             OverdueEnqueues overdue) {
        this.queueName = queueName;
        this.levels = levels;
        this.configuration = configuration;
        this.fencing = fencing;
        this.overdue = overdue;
    }

    /**
     * Stores one copy; {@code intake}: for a caller that answers a client still holding the mail.
     * Completes with the last answer (OK: stored), or exceptionally with
     * {@link EnqueueAbandonedAtShutdown} when James stopped while accepted mail was waiting.
     */
    CompletableFuture<Ack> store(String mailName, byte[] id, int level, long notBefore, byte[] body, boolean intake) {
        return start(new Attempts(mailName, id, level, notBefore, body, intake));
    }

    /**
     * Deletes a mail done (retried as accepted mail is). Completes with the last answer: OK or
     * NOT_FOUND (deleted), STALE_EPOCH (fenced: left for the queue's owner), an error of the request;
     * or exceptionally with {@link EnqueueAbandonedAtShutdown} when James stopped meanwhile.
     */
    CompletableFuture<Ack> delete(String mailName, byte[] id, int level) {
        return start(new Attempts(mailName, id, level, 0, null, false));
    }

    private CompletableFuture<Ack> start(Attempts attempts) {
        attempts.next();
        return attempts.result;
    }

    /** James is stopping: waiting enqueues end, no retry starts. */
    void stop() {
        stopped.complete(null);
    }

    /**
     * One write's attempts: a store of one copy ({@code body} set) or a delete ({@code body} null).
     * Each attempt starts the next one itself (no chain of futures grows while a mail waits, however
     * long); the outcome completes {@link #result}.
     */
    private final class Attempts {
        final CompletableFuture<Ack> result = new CompletableFuture<>();
        private final String mailName;
        private final byte[] id;
        private final int level;
        private final long notBefore;
        private final byte[] body;
        private final boolean intake;
        private final long startedAt = System.nanoTime();
        /** Intake: the last retry. Accepted mail: when the wait is reported as overdue. */
        private final long limitAt;
        private long backoffMillis = FIRST_BACKOFF_MILLIS;
        private int retries;
        private boolean putSent;
        private boolean reportedOverdue;

        Attempts(String mailName, byte[] id, int level, long notBefore, byte[] body, boolean intake) {
            this.mailName = mailName;
            this.id = id;
            this.level = level;
            this.notBefore = notBefore;
            this.body = body;
            this.intake = intake;
            this.limitAt = startedAt
                + (intake ? configuration.requestTimeout() : configuration.acceptedMailRetryTimeout()).toNanos();
        }

        private boolean isDelete() {
            return body == null;
        }

        private String what() {
            return isDelete() ? "DELETE" : "PUT";
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
            // A fenced node still tries a delete once: the mail it delivered is then not delivered again.
            if (fencing.isFenced() && !(isDelete() && retries == 0)) {
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
            if (isDelete()) {
                return queue.delete(id);
            }
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
            if (ack.isOk() || isDelete() && ack.status() == Status.NOT_FOUND || !isRetryable(ack.status())) {
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
                LOGGER.warn("Queue {}: the {} of accepted mail {} has waited {} s for the KVS store (last answer: {} {});"
                    + " the mail stays in the queue James read it from and the {} keeps retrying",
                    queueName, what(), mailName, TimeUnit.NANOSECONDS.toSeconds(now - startedAt), ack.status(), ack.reason(),
                    what());
            }
            LOGGER.debug("Queue {}: {} {} answered {} ({}), retrying in {} ms", queueName, what(), MessageIds.asString(id),
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

        /**
         * The node is fenced: intake fails now, a delete too (the mail is left for the queue's owner);
         * a store of accepted mail waits, in place, until James stops.
         */
        private void fenced() {
            String cause = fencing.cause().orElse("fenced");
            if (intake || isDelete()) {
                finish(Ack.failed(Status.STALE_EPOCH, "this James node is fenced: " + cause));
                return;
            }
            LOGGER.info("Queue {}: mail {} not enqueued: this James node is fenced; it stays in the queue James read"
                + " it from until James stops", queueName, mailName);
            stopped.thenRun(() -> abandon("this James node is fenced and James is stopping"));
        }

        private void abandon(String why) {
            endOverdue();
            result.completeExceptionally(isDelete() ? EnqueueAbandonedAtShutdown.delete(queueName, mailName, why)
                : new EnqueueAbandonedAtShutdown(queueName, mailName, why));
        }

        private void finish(Ack ack) {
            endOverdue();
            if (retries > 0) {
                LOGGER.info("Queue {}: {} {} {} after {} retries: {} {}", queueName, what(), MessageIds.asString(id),
                    ack.isOk() ? "done" : "failed", retries, ack.status(), ack.isOk() ? "" : ack.reason());
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
