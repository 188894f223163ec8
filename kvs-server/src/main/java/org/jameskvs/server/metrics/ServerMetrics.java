package org.jameskvs.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.storage.QueueState;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * The server's meters (Micrometer, exported in Prometheus format). Names as Prometheus shows them:
 * <pre>
 * kvs_requests_total{op}            requests handled, by opcode
 * kvs_errors_total{status}          non-OK responses, by status
 * kvs_bytes_received_total          request bytes read
 * kvs_bytes_sent_total              response bytes written
 * kvs_connections                   open client connections
 * kvs_queue_size{queue}             live messages per queue: mail only (system records, ids starting
 *                                   with a zero byte such as the replication layer's record, not counted)
 * kvs_queue_bytes{queue}            live body bytes per queue
 * kvs_queue_txn{queue}              transaction number per queue
 * kvs_queue_damaged{queue}          1 when recovery found records of the queue lost (see QueueStore's
 *                                   crash contract), else 0
 * kvs_queue_requests_total{queue}   requests addressed to the queue (through a handle: every opcode but
 *                                   PING, AUTH, OPEN, LIST), whatever their answer: what a queue costs
 *                                   the server in requests, e.g. a suspended lane's while it holds mail
 * kvs_queue_response_bytes_total{queue}  bytes of those requests' answers (READ's messages included)
 * kvs_journal_bytes                 journal size on disk
 * kvs_block_seconds                 time to apply one block of requests (histogram; p50/p99 exported)
 * kvs_commit_seconds                time of one group commit (histogram)
 * kvs_block_requests                requests per block (how well pipelining batches)
 * jvm_memory_used_bytes{area,id}    heap and off-heap use (plus jvm_gc_*, process_cpu_usage)
 * </pre>
 * Gauges of queue sizes are read by the scrape thread while the event loop writes them: a scrape may
 * see a value one block old, which is fine for monitoring and keeps the hot path lock-free.
 */
public final class ServerMetrics {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Counter[] requests = new Counter[256];
    private final Counter[] errors = new Counter[Status.values().length];
    private final Counter bytesReceived;
    private final Counter bytesSent;
    private final AtomicInteger connections = new AtomicInteger();
    private final Timer blockTimer;
    private final Timer commitTimer;
    private final DistributionSummary blockRequests;
    private final Map<String, List<Meter>> queueMeters = new HashMap<>();
    private final Map<String, QueueTally> queueTallies = new ConcurrentHashMap<>();

    /**
     * The requests addressed to one queue and their answers' bytes. Counted on the I/O thread, read by
     * the scrape thread (adders: no lost count, no lock).
     */
    public static final class QueueTally {
        private final LongAdder requests = new LongAdder();
        private final LongAdder responseBytes = new LongAdder();

        /** One request to the queue, answered with {@code bytes} bytes. */
        public void request(int bytes) {
            requests.increment();
            responseBytes.add(bytes);
        }

        public long requests() {
            return requests.sum();
        }

        public long responseBytes() {
            return responseBytes.sum();
        }
    }

    public ServerMetrics() {
        for (Opcode op : Opcode.values()) {
            requests[op.code() & 0xFF] = Counter.builder("kvs.requests").tag("op", op.name()).register(registry);
        }
        for (Status s : Status.values()) {
            errors[s.ordinal()] = Counter.builder("kvs.errors").tag("status", s.name()).register(registry);
        }
        bytesReceived = Counter.builder("kvs.bytes.received").register(registry);
        bytesSent = Counter.builder("kvs.bytes.sent").register(registry);
        Gauge.builder("kvs.connections", connections, AtomicInteger::get).register(registry);
        blockTimer = Timer.builder("kvs.block").publishPercentiles(0.5, 0.99).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(1000)).maximumExpectedValue(Duration.ofSeconds(1))
                .register(registry);
        commitTimer = Timer.builder("kvs.commit").publishPercentiles(0.5, 0.99).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(1000)).maximumExpectedValue(Duration.ofSeconds(1))
                .register(registry);
        blockRequests = DistributionSummary.builder("kvs.block.requests").register(registry);
        // JVM heap/GC/CPU: operators check that payloads stay off-heap (heap flat as queues grow).
        new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
        new io.micrometer.core.instrument.binder.jvm.JvmGcMetrics().bindTo(registry);
        new io.micrometer.core.instrument.binder.system.ProcessorMetrics().bindTo(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    public String scrape() {
        return registry.scrape();
    }

    public void request(byte opcode) {
        Counter c = requests[opcode & 0xFF];
        if (c != null) {
            c.increment();
        }
    }

    /** {@code n} requests of one opcode at once (see {@link BlockTally}). */
    public void requests(byte opcode, int n) {
        Counter c = requests[opcode & 0xFF];
        if (c != null) {
            c.increment(n);
        }
    }

    public void error(Status status) {
        errors[status.ordinal()].increment();
    }

    public void bytesReceived(long n) {
        bytesReceived.increment(n);
    }

    public void bytesSent(int n) {
        bytesSent.increment(n);
    }

    public void connectionOpened() {
        connections.incrementAndGet();
    }

    public void connectionClosed() {
        connections.decrementAndGet();
    }

    public void block(long nanos, int requestCount) {
        blockTimer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        blockRequests.record(requestCount);
    }

    public void commit(long nanos) {
        commitTimer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** The journal's fsyncs since start ({@code kvs_fsyncs_total}). */
    public void fsyncs(Object store, ToDoubleFunction<Object> count) {
        io.micrometer.core.instrument.FunctionCounter.builder("kvs.fsyncs", store, count)
                .description("fsyncs of the journal (fsync.policy batch or interval)").register(registry);
    }

    public void journalSize(Object store, ToDoubleFunction<Object> size) {
        Gauge.builder("kvs.journal.bytes", store, size).register(registry);
    }

    /** The tally of the queue named {@code name} (created with its meters; a fresh one for a queue without). */
    public QueueTally queueTally(String name) {
        return queueTallies.computeIfAbsent(name, any -> new QueueTally());
    }

    public void queueCreated(QueueState q) {
        if (queueMeters.containsKey(q.name())) {
            return;
        }
        QueueTally tally = queueTally(q.name());
        queueMeters.put(q.name(), List.of(
                FunctionCounter.builder("kvs.queue.requests", tally, QueueTally::requests)
                        .tag("queue", q.name()).register(registry),
                FunctionCounter.builder("kvs.queue.response.bytes", tally,
                        QueueTally::responseBytes).tag("queue", q.name()).register(registry),
                Gauge.builder("kvs.queue.size", q, QueueState::userSize).tag("queue", q.name()).register(registry),
                Gauge.builder("kvs.queue.bytes", q, QueueState::bytes).tag("queue", q.name()).register(registry),
                Gauge.builder("kvs.queue.txn", q, QueueState::txn).tag("queue", q.name()).register(registry),
                Gauge.builder("kvs.queue.damaged", q, x -> x.damaged() ? 1 : 0).tag("queue", q.name())
                        .register(registry)));
    }

    public void queueDropped(String name) {
        List<Meter> meters = queueMeters.remove(name);
        queueTallies.remove(name);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
    }
}
