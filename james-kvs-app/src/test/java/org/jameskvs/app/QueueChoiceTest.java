package org.jameskvs.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class QueueChoiceTest {

    @Test
    void parsesTheTwoQueues() {
        assertThat(QueueChoice.parse("kvs")).isEqualTo(QueueChoice.KVS);
        assertThat(QueueChoice.parse(" Memory ")).isEqualTo(QueueChoice.MEMORY);
    }

    @Test
    void refusesAnythingElse() {
        assertThatThrownBy(() -> QueueChoice.parse("rabbitmq")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("kvs.queue");
    }

    @Test
    void pointsTheActiveMqBaselineToTheBenchModule() {
        // ActiveMQ's jars are not in this app's lib/: the baseline is started by james-kvs-bench.
        assertThatThrownBy(() -> QueueChoice.parse("activemq")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("james-kvs-bench");
    }
}
