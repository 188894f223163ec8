package org.jameskvs.bench.james;

import org.apache.james.metrics.api.Metric;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.metrics.api.TimeMetric;
import org.reactivestreams.Publisher;

/**
 * A {@link MetricFactory} that records nothing. The queue benchmarks use it instead of James's
 * {@code RecordingMetricFactory} (metrics-tests), which keeps every timer sample in a synchronized
 * multimap: over millions of operations that would be a growing heap and a lock on the measured path.
 */
final class NoopMetricFactory implements MetricFactory {
    private static final Metric METRIC = new Metric() {
        @Override
        public void increment() {
        }

        @Override
        public void decrement() {
        }

        @Override
        public void add(int value) {
        }

        @Override
        public void remove(int value) {
        }

        @Override
        public long getCount() {
            return 0;
        }
    };

    private static final TimeMetric.ExecutionResult NO_RESULT = new TimeMetric.ExecutionResult() {
        @Override
        public java.time.Duration elasped() {
            return java.time.Duration.ZERO;
        }

        @Override
        public TimeMetric.ExecutionResult logWhenExceedP99(java.time.Duration threshold) {
            return this;
        }
    };

    @Override
    public Metric generate(String name) {
        return METRIC;
    }

    @Override
    public TimeMetric timer(String name) {
        return new TimeMetric() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public ExecutionResult stopAndPublish() {
                return NO_RESULT;
            }
        };
    }

    @Override
    public <T> Publisher<T> decoratePublisherWithTimerMetric(String name, Publisher<T> publisher) {
        return publisher;
    }

    @Override
    public <T> Publisher<T> decoratePublisherWithTimerMetricLogP99(String name, Publisher<T> publisher) {
        return publisher;
    }
}
