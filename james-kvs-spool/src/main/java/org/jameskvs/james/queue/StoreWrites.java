package org.jameskvs.james.queue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Writes one James queue's mail into its KVS queues: stores the copies enqueued, deletes the ones
 * done; opens the level's KVS queue first, and retries (Reactor's {@link Retry#backoff}: 50 ms doubling
 * to 1 s) what the kind of write allows. The first attempt is plain {@link CompletableFuture}s, no Reactor
 * object: it is the only one nearly every write makes, and it runs once per enqueue and per delete on
 * James's hot path; the Reactor retry pipeline is built only for a write whose first answer is to be
 * retried.
 * <ul>
 * <li><b>Intake enqueue</b> (into an intake queue, by a caller that answers a client still holding
 *   the mail: SMTP, JMAP; see {@code intakeCallers}): a refusal or an unknown outcome fails the
 *   enqueue, so the client gets a 4xx and keeps the mail. Only BAD_HANDLE (certainly not applied:
 *   the queue is being re-opened) is retried, for {@code requestTimeout}. A fenced node fails it at
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
final class StoreWrites {
    private static final Logger LOGGER = LoggerFactory.getLogger(StoreWrites.class);
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(50);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);

    private final String queueName;
    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final Fencing fencing;
    private final OverdueEnqueues overdue;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private final LongAdder retriedWrites = new LongAdder();

    StoreWrites(String queueName, PriorityLevels levels, KvsSpoolConfiguration configuration, Fencing fencing,
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
        return new Write(mailName, id, level, notBefore, body, intake).run();
    }

    /**
     * Deletes a mail done (retried as accepted mail is). Completes with the last answer: OK or
     * NOT_FOUND (deleted), STALE_EPOCH (fenced: left for the queue's owner), an error of the request;
     * or exceptionally with {@link EnqueueAbandonedAtShutdown} when James stopped meanwhile.
     */
    CompletableFuture<Ack> delete(String mailName, byte[] id, int level) {
        return new Write(mailName, id, level, 0, null, false).run();
    }

    /** James is stopping: waiting enqueues end, no retry starts. */
    void stop() {
        stopped.complete(null);
    }

    /** Writes whose first attempt got an answer to retry (each built a retry pipeline); for tests. */
    long retriedWrites() {
        return retriedWrites.sum();
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** An answer the kind of write retries: the signal {@link Retry} acts on. */
    private static final class Retryable extends RuntimeException {
        final transient Ack ack;

        Retryable(Ack ack) {
            super(ack.status() + " " + ack.reason(), null, false, false);
            this.ack = ack;
        }
    }

    /** One write, a store of one copy ({@code body} set) or a delete ({@code body} null), and its attempts. */
    private final class Write {
        private final String mailName;
        private final byte[] id;
        private final int level;
        private final long notBefore;
        private final byte[] body;
        private final boolean intake;
        private final long startedAt = System.nanoTime();
        /** Intake: no retry starts after it. Accepted mail: when the wait is reported as overdue. */
        private final long limitAt;
        private int attempts;
        private boolean putSent;
        private boolean reportedOverdue;

        Write(String mailName, byte[] id, int level, long notBefore, byte[] body, boolean intake) {
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

        /**
         * The first attempt as plain futures: nearly every write ends there, and building the Reactor
         * retry pipeline for each one cost about 5 % of James's CPU under load. Only an answer to
         * retry builds it ({@link #retried}).
         */
        CompletableFuture<Ack> run() {
            CompletableFuture<Ack> first;
            try {
                first = attempt();
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
            return first.exceptionallyCompose(failure -> {
                Throwable cause = unwrap(failure);
                return cause instanceof Retryable retryable ? retried(retryable) : CompletableFuture.failedFuture(cause);
            });
        }

        /**
         * The first attempt answered {@code firstAnswer}: the same rules decide on it as on every later
         * answer (an intake past its deadline ends with it), then later attempts follow with Reactor's
         * {@link Retry#backoff} (50 ms doubling to 1 s, no jitter).
         */
        private CompletableFuture<Ack> retried(Retryable firstAnswer) {
            retriedWrites.increment();
            AtomicReference<Retryable> replay = new AtomicReference<>(firstAnswer);
            return Mono.defer(() -> {
                    Retryable answered = replay.getAndSet(null);
                    return answered != null ? Mono.<Ack>error(answered) : Mono.fromFuture(attempt());
                })
                .retryWhen(Retry.backoff(Long.MAX_VALUE, FIRST_BACKOFF).maxBackoff(MAX_BACKOFF).jitter(0)
                    .filter(e -> e instanceof Retryable && (!intake || System.nanoTime() < limitAt))
                    .doBeforeRetry(signal -> beforeRetry(((Retryable) signal.failure()).ack))
                    .onRetryExhaustedThrow((spec, signal) -> signal.failure()))
                .onErrorResume(Retryable.class, last -> Mono.just(last.ack)) // intake past its deadline
                .doOnNext(this::finished)
                .doOnTerminate(this::endOverdue)
                .toFuture();
        }

        /** One attempt: an answer that ends the write, or a {@link Retryable} failure. */
        private CompletableFuture<Ack> attempt() {
            if (stopped.isDone()) {
                return intake ? CompletableFuture.completedFuture(Ack.failed(Status.SHUTTING_DOWN, "James is stopping"))
                    : abandon("James is stopping");
            }
            // A fenced node still tries a delete once: the mail it delivered is then not delivered again.
            if (fencing.isFenced() && !(isDelete() && attempts == 0)) {
                return fenced();
            }
            attempts++;
            return levels.open(level).thenCompose(this::send).exceptionally(Write::openFailure).thenCompose(this::judged);
        }

        private CompletableFuture<Ack> judged(Ack ack) {
            if (ack.isOk() || isDelete() && ack.status() == Status.NOT_FOUND || !isRetryable(ack.status())) {
                return CompletableFuture.completedFuture(ack);
            }
            return fencing.isFenced() ? fenced() : CompletableFuture.failedFuture(new Retryable(ack));
        }

        private CompletableFuture<Ack> send(KvsQueue queue) {
            if (isDelete()) {
                return queue.delete(id);
            }
            boolean replace = putSent;
            putSent = true;
            return replace ? queue.putReplacing(id, level, notBefore, new byte[0], body)
                : queue.put(id, level, notBefore, new byte[0], body);
        }

        private static Ack openFailure(Throwable failure) {
            Throwable cause = unwrap(failure);
            return cause instanceof KvsException kvs ? Ack.failed(kvs.status(), kvs.getMessage())
                : Ack.failed(Status.INTERNAL_ERROR, "cannot open the queue: " + cause);
        }

        private boolean isRetryable(Status status) {
            if (Fencing.showsAnotherWriter(status)) {
                return true; // fenced: handled in attempt (intake fails, accepted mail waits)
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

        private void beforeRetry(Ack ack) {
            long now = System.nanoTime();
            if (!intake && !reportedOverdue && now >= limitAt) {
                reportedOverdue = true;
                overdue.started();
                LOGGER.warn("Queue {}: the {} of accepted mail {} has waited {} s for the KVS store (last answer: {} {});"
                    + " the mail stays in the queue James read it from and the {} keeps retrying",
                    queueName, what(), mailName, TimeUnit.NANOSECONDS.toSeconds(now - startedAt), ack.status(), ack.reason(),
                    what());
            }
            LOGGER.debug("Queue {}: {} {} answered {} ({}), retrying", queueName, what(), MessageIds.asString(id),
                ack.status(), ack.reason());
        }

        /**
         * The node is fenced: intake fails now, a delete too (the mail is left for the queue's owner);
         * a store of accepted mail waits, in place, until James stops.
         */
        private CompletableFuture<Ack> fenced() {
            String cause = fencing.cause().orElse("fenced");
            if (intake || isDelete()) {
                return CompletableFuture.completedFuture(Ack.failed(Status.STALE_EPOCH, "this James node is fenced: " + cause));
            }
            LOGGER.info("Queue {}: mail {} not enqueued: this James node is fenced; it stays in the queue James read"
                + " it from until James stops", queueName, mailName);
            return stopped.thenCompose(ignored -> abandon("this James node is fenced and James is stopping"));
        }

        private CompletableFuture<Ack> abandon(String why) {
            return CompletableFuture.failedFuture(isDelete() ? EnqueueAbandonedAtShutdown.delete(queueName, mailName, why)
                : new EnqueueAbandonedAtShutdown(queueName, mailName, why));
        }

        private void finished(Ack ack) {
            if (attempts > 1) {
                LOGGER.info("Queue {}: {} {} {} after {} retries: {} {}", queueName, what(), MessageIds.asString(id),
                    ack.isOk() ? "done" : "failed", attempts - 1, ack.status(), ack.isOk() ? "" : ack.reason());
            }
        }

        private void endOverdue() {
            if (reportedOverdue) {
                reportedOverdue = false;
                overdue.ended();
            }
        }
    }
}
