package org.jameskvs.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class QueueChoiceTest {

    @Test
    void parsesTheThreeQueues() {
        assertThat(QueueChoice.parse("kvs")).isEqualTo(QueueChoice.KVS);
        assertThat(QueueChoice.parse(" Memory ")).isEqualTo(QueueChoice.MEMORY);
        assertThat(QueueChoice.parse("activemq")).isEqualTo(QueueChoice.ACTIVEMQ);
    }

    @Test
    void refusesAnythingElse() {
        assertThatThrownBy(() -> QueueChoice.parse("rabbitmq")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("kvs.queue");
    }
}
