package org.jameskvs.bench.james;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.apache.james.core.MailAddress;
import org.apache.james.lifecycle.api.LifecycleUtil;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.apache.james.queue.memory.MemoryMailQueueFactory;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageSource;
import org.jameskvs.bench.ServerProcesses;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.reactivestreams.Subscription;

import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * The plug-in's mail queue through James's own {@code MailQueue} API: the real
 * {@link org.jameskvs.james.queue.KvsMailQueue} (from {@link KvsMailQueueFactory}, over one
 * {@link KvsClientOpener} connection) against a KVS server started as its own OS process
 * ({@link ServerProcesses#kvs}, fsync {@code none}), and in the same run James 3.8.1's in-memory
 * queue ({@link MemoryMailQueueFactory}) as the ceiling: no I/O, no serialization, a
 * {@code MailImpl.duplicate} into a {@code DelayQueue}.
 *
 * <h2>What is measured</h2>
 * <ul>
 * <li>{@code enqueue} (4 threads, one shared queue): {@code MailQueue.enQueue(mail)}, which for the
 *   plug-in returns only once the server acknowledged the PUT (encode + PUT + ack). Each invocation
 *   enqueues a new {@code MailImpl} (own name, 1 recipient, the {@link BenchMails#ATTRIBUTES}) over
 *   the thread's MIME message. After each iteration the queue size must equal the number of
 *   enqueues counted, then the queue is cleared (the memory queue would otherwise fill the heap).</li>
 * <li>{@code roundTrip} (1 thread) and {@code roundTrip4} (4 threads): enqueue one mail, dequeue the
 *   next item from {@code deQueue()} (demand of one, requested after the previous item is done),
 *   check it is the mail just enqueued (by name), {@code done(SUCCESS)} (the plug-in deletes it on
 *   the server). Each thread has its own queue, so FIFO makes the name check exact.</li>
 * </ul>
 * Scores are operations (mails) per second over all threads. {@code size}: the MIME size of the
 * mail, 1 KB and 10 KB. {@code target}: {@code kvs} (the plug-in) or {@code memory} (James's memory
 * queue). The plug-in's settings are its defaults except {@code requestTimeout} 10 s.
 *
 * <p>Reading the numbers: a plug-in round trip is three sequential server requests (PUT, READ by the
 * queue's reader thread, DELETE on {@code done}) plus encode and decode, with the server process on
 * the same machine. The memory queue's enqueue is not free either: {@code MailImpl.duplicate} copies
 * the message and parses its headers (3.8.1). James's leak detector is off in the fork
 * ({@code james.lifecycle.leak.detection.mode=none}): the memory queue's {@code clear()} drops mails
 * without disposing them, and the detector's log lines would land in the measurement.
 *
 * <h2>Run</h2>
 * <pre>
 * java -cp jmh-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main 'bench.james.MailQueueBenchmark' -wi 1 -w 5 -i 3 -r 2 -f 1
 * </pre>
 * The KVS server is started once per trial (target x size x benchmark) from the same jar and
 * stopped, with its data directory deleted, at the end of the trial.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g", "-Djames.lifecycle.leak.detection.mode=none"})
public class MailQueueBenchmark {
    private static final Duration DEQUEUE_TIMEOUT = Duration.ofSeconds(30);

    @Param({"kvs", "memory"})
    public String target;

    @Param({"1024", "10240"})
    public int size;

    private ServerProcesses.Running server;
    private KvsClientOpener opener;
    private KvsQueues kvsQueues;
    private KvsMailQueueFactory kvsFactory;
    private MemoryMailQueueFactory memoryFactory;
    private MailQueueFactory<? extends ManageableMailQueue> factory;
    private ManageableMailQueue sharedQueue;
    private byte[] mime;
    private final AtomicInteger queueCounter = new AtomicInteger();
    private final LongAdder enqueued = new LongAdder();

    @Setup(Level.Trial)
    public void start() throws Exception {
        mime = size == 1024 ? BenchMails.mime(BenchMails.ONE_KB) : BenchMails.mime(BenchMails.TEN_KB);
        if (mime.length != size) {
            throw new IllegalStateException("mail of " + mime.length + " bytes, wanted " + size);
        }
        switch (target) {
            case "kvs":
                server = ServerProcesses.kvs("none");
                Properties properties = new Properties();
                properties.setProperty("servers", "127.0.0.1:" + server.port());
                properties.setProperty("user", "james");
                properties.setProperty("password", ServerProcesses.PASSWORD);
                properties.setProperty("namespace", "bench-" + UUID.randomUUID());
                properties.setProperty("requestTimeout", "10000");
                KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(properties);
                opener = KvsClientOpener.connect(configuration);
                kvsQueues = new KvsQueues(opener, configuration);
                kvsFactory = new KvsMailQueueFactory(kvsQueues, new RawMailQueueItemDecoratorFactory(),
                    new NoopMetricFactory(), new NoopGaugeRegistry());
                factory = kvsFactory;
                break;
            case "memory":
                memoryFactory = new MemoryMailQueueFactory(new RawMailQueueItemDecoratorFactory());
                factory = memoryFactory;
                break;
            default:
                throw new IllegalArgumentException("unknown target " + target);
        }
        sharedQueue = newQueue();
    }

    ManageableMailQueue newQueue() {
        return factory.createQueue(MailQueueName.of("bench-" + queueCounter.incrementAndGet()));
    }

    @Setup(Level.Iteration)
    public void resetCount() {
        enqueued.reset();
    }

    /** The enqueues of the iteration must all be in the shared queue; then it is emptied. */
    @TearDown(Level.Iteration)
    public void checkAndClear() throws Exception {
        long expected = enqueued.sum();
        if (expected > 0) {
            long size = sharedQueue.getSize();
            if (size != expected) {
                throw new IllegalStateException(target + ": " + expected + " mails enqueued, queue holds " + size);
            }
            sharedQueue.clear();
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        if (kvsFactory != null) {
            kvsFactory.stop();
            kvsQueues.close();
            opener.close();
        }
        if (memoryFactory != null) {
            memoryFactory.clean();
        }
        if (server != null) {
            server.close();
        }
    }

    /** One benchmark thread: its MIME message and its mail names. */
    @State(Scope.Thread)
    public static class Lane {
        private static final AtomicInteger LANES = new AtomicInteger();
        private final int lane = LANES.incrementAndGet();
        private final List<MailAddress> recipients = BenchMails.recipients(1);
        private MimeMessageSource content;
        private long sequence;

        @Setup(Level.Trial)
        public void setUp(MailQueueBenchmark benchmark) {
            content = BenchMails.source(benchmark.mime);
        }

        /** A new mail (own name) over the thread's MIME bytes, as SMTP hands it to the queue. */
        MailImpl nextMail() throws Exception {
            return BenchMails.mail("bench-" + lane + "-" + (++sequence), recipients, content);
        }
    }

    /** A round-trip thread: its own queue (so FIFO makes the name check exact) and its dequeuer. */
    @State(Scope.Thread)
    public static class RoundTripLane {
        private ManageableMailQueue queue;
        private Dequeuer dequeuer;

        @Setup(Level.Trial)
        public void setUp(MailQueueBenchmark benchmark) {
            queue = benchmark.newQueue();
            dequeuer = new Dequeuer();
            Flux.from(queue.deQueue()).subscribe(dequeuer);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            dequeuer.dispose();
        }
    }

    /** Takes one item at a time: demand is signalled only when the caller asks for the next item. */
    static final class Dequeuer extends BaseSubscriber<MailQueue.MailQueueItem> {
        private final BlockingQueue<MailQueue.MailQueueItem> items = new ArrayBlockingQueue<>(16);
        private volatile Throwable error;

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            // no demand until next()
        }

        @Override
        protected void hookOnNext(MailQueue.MailQueueItem item) {
            items.add(item);
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            error = throwable;
        }

        MailQueue.MailQueueItem next() throws InterruptedException {
            request(1);
            MailQueue.MailQueueItem item = items.poll(DEQUEUE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (item == null) {
                throw new IllegalStateException("nothing dequeued within " + DEQUEUE_TIMEOUT
                    + (error == null ? "" : ": " + error), error);
            }
            return item;
        }
    }

    @Benchmark
    @Threads(4)
    public String enqueue(Lane lane) throws Exception {
        MailImpl mail = lane.nextMail();
        sharedQueue.enQueue(mail);
        enqueued.increment();
        LifecycleUtil.dispose(mail); // as James's SMTP server does once the mail is queued
        return mail.getName();
    }

    @Benchmark
    @Threads(1)
    public String roundTrip(Lane lane, RoundTripLane roundTrip) throws Exception {
        return enqueueDequeue(lane, roundTrip);
    }

    @Benchmark
    @Threads(4)
    public String roundTrip4(Lane lane, RoundTripLane roundTrip) throws Exception {
        return enqueueDequeue(lane, roundTrip);
    }

    private String enqueueDequeue(Lane lane, RoundTripLane roundTrip) throws Exception {
        MailImpl mail = lane.nextMail();
        roundTrip.queue.enQueue(mail);
        LifecycleUtil.dispose(mail);
        MailQueue.MailQueueItem item = roundTrip.dequeuer.next();
        String name = item.getMail().getName();
        if (!mail.getName().equals(name)) {
            throw new IllegalStateException(target + ": enqueued " + mail.getName() + ", dequeued " + name);
        }
        item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
        LifecycleUtil.dispose(item.getMail()); // as James's spooler does after processing
        return name;
    }
}
