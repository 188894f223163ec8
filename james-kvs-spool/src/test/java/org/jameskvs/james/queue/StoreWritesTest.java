package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.awaitility.Awaitility;
import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.contract.InMemoryKvs;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Hooks;

/**
 * {@link StoreWrites} on an in-memory store whose PUTs answer a script of refusals before they store:
 * the retries (backoff, giving up, shutdown) and the first attempt that needs no retry machinery.
 */
class StoreWritesTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final byte[] BODY = "a mail".getBytes(StandardCharsets.US_ASCII);

    private final ScriptedKvs kvs = new ScriptedKvs();
    private StoreWrites writes;
    private KvsQueues queues;

    private StoreWrites writes(String... settings) {
        Properties properties = new Properties();
        for (int i = 0; i + 1 < settings.length; i += 2) {
            properties.setProperty(settings[i], settings[i + 1]);
        }
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(properties);
        queues = new KvsQueues(kvs, configuration);
        writes = new StoreWrites("outgoing", new PriorityLevels(queues, "outgoing"), configuration, queues.fencing(),
            new OverdueEnqueues());
        return writes;
    }

    @AfterEach
    void stop() {
        if (writes != null) {
            writes.stop();
        }
        if (queues != null) {
            queues.close();
        }
        Hooks.resetOnEachOperator(StoreWritesTest.class.getName());
    }

    @Test
    void acceptedMailIsRetriedWithADoublingBackoffUntilStored() throws Exception {
        StoreWrites writes = writes();
        kvs.refuse(Status.TIMEOUT, Status.QUEUE_FULL, Status.TIMEOUT, Status.TIMEOUT);
        byte[] id = MessageIds.newId();

        Ack ack = writes.store("mail1", id, MailPriority.NORMAL, 0, BODY, false).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(ack.status()).isEqualTo(Status.OK);
        assertThat(kvs.putTimes).hasSize(5);
        // Each wait is at least the backoff (50 ms doubling): lower bounds only, a loaded machine waits longer.
        List<Long> gapsMillis = gapsMillis(kvs.putTimes);
        assertThat(gapsMillis.get(0)).isGreaterThanOrEqualTo(50);
        assertThat(gapsMillis.get(1)).isGreaterThanOrEqualTo(100);
        assertThat(gapsMillis.get(2)).isGreaterThanOrEqualTo(200);
        assertThat(gapsMillis.get(3)).isGreaterThanOrEqualTo(400);
        assertThat(kvs.stored(id)).isTrue();
        assertThat(writes.retriedWrites()).isEqualTo(1);
    }

    @Test
    void intakeGivesUpAtItsDeadlineWithTheLastAnswer() throws Exception {
        StoreWrites writes = writes("requestTimeout", "400");
        kvs.refuse(new ArrayDeque<>(List.of(Status.BAD_HANDLE)), true);

        Ack ack = writes.store("mail1", MessageIds.newId(), MailPriority.NORMAL, 0, BODY, true)
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(ack.status()).isEqualTo(Status.BAD_HANDLE);
        assertThat(kvs.putTimes.size()).isGreaterThan(1); // retried while before the deadline
    }

    @Test
    void intakeDoesNotRetryAnAnswerOnlyAcceptedMailWaitsFor() throws Exception {
        StoreWrites writes = writes();
        kvs.refuse(Status.TIMEOUT);

        Ack ack = writes.store("mail1", MessageIds.newId(), MailPriority.NORMAL, 0, BODY, true)
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(ack.status()).isEqualTo(Status.TIMEOUT);
        assertThat(kvs.putTimes).hasSize(1);
    }

    @Test
    void aRetryingWriteOfAcceptedMailEndsAbandonedWhenJamesStops() {
        StoreWrites writes = writes();
        kvs.refuse(new ArrayDeque<>(List.of(Status.TIMEOUT)), true);
        CompletableFuture<Ack> write = writes.store("mail1", MessageIds.newId(), MailPriority.NORMAL, 0, BODY, false);
        Awaitility.await().atMost(WAIT).until(() -> kvs.putTimes.size() >= 2);

        writes.stop();

        assertThatThrownBy(() -> write.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(EnqueueAbandonedAtShutdown.class);
    }

    @Test
    void aFirstAttemptStoredAssemblesNoReactorOperator() throws Exception {
        StoreWrites writes = writes();
        byte[] first = MessageIds.newId();
        writes.store("mail0", first, MailPriority.NORMAL, 0, BODY, false).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        AtomicLong assembled = new AtomicLong();
        Hooks.onEachOperator(StoreWritesTest.class.getName(), publisher -> {
            assembled.incrementAndGet();
            return publisher;
        });

        for (int i = 1; i <= 3; i++) {
            byte[] id = MessageIds.newId();
            assertThat(writes.store("mail" + i, id, MailPriority.NORMAL, 0, BODY, false)
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS).status()).isEqualTo(Status.OK);
            assertThat(writes.delete("mail" + i, id, MailPriority.NORMAL)
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS).status()).isEqualTo(Status.OK);
        }

        assertThat(assembled.get()).as("Reactor operators assembled by stores and deletes done at once").isZero();
        assertThat(writes.retriedWrites()).isZero();
    }

    private static List<Long> gapsMillis(List<Long> nanoTimes) {
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < nanoTimes.size(); i++) {
            gaps.add(TimeUnit.NANOSECONDS.toMillis(nanoTimes.get(i) - nanoTimes.get(i - 1)));
        }
        return gaps;
    }

    /** InMemoryKvs whose PUTs first answer the refusals scripted, in order (or the last one forever), recording when. */
    private static final class ScriptedKvs implements KvsQueueOpener {
        private final InMemoryKvs delegate = new InMemoryKvs();
        final List<Long> putTimes = new CopyOnWriteArrayList<>();
        private Deque<Status> refusals = new ArrayDeque<>();
        private boolean forever;
        private volatile KvsQueue opened;

        void refuse(Status... statuses) {
            refuse(new ArrayDeque<>(List.of(statuses)), false);
        }

        synchronized void refuse(Deque<Status> statuses, boolean lastForever) {
            refusals = statuses;
            forever = lastForever;
        }

        private synchronized Status nextRefusal() {
            putTimes.add(System.nanoTime());
            return forever && refusals.size() == 1 ? refusals.peek() : refusals.poll();
        }

        boolean stored(byte[] id) {
            return opened.get(id).join().isOk();
        }

        @Override
        public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
            return delegate.open(name, options).thenApply(result -> {
                opened = new Scripted(result.queue());
                return new OpenResult(result.status(), result.reason(), opened, result.txn(), result.epoch(), result.size());
            });
        }

        @Override
        public CompletableFuture<ListResult> listQueues() {
            return delegate.listQueues();
        }

        private final class Scripted extends ForwardingKvsQueue {
            Scripted(KvsQueue queue) {
                super(queue);
            }

            @Override
            public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
                Status refusal = nextRefusal();
                return refusal != null ? CompletableFuture.completedFuture(Ack.failed(refusal, "refused by test"))
                    : queue.put(id, priority, notBefore, state, body);
            }

            @Override
            public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
                Status refusal = nextRefusal();
                return refusal != null ? CompletableFuture.completedFuture(Ack.failed(refusal, "refused by test"))
                    : queue.putReplacing(id, priority, notBefore, state, body);
            }
        }
    }
}
