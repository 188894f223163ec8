package org.jameskvs.testkit;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

class ExternalToolTest {

    @AfterEach
    void clearProperty() {
        System.clearProperty(ExternalTool.REQUIRED_PROPERTY);
    }

    @Test
    void anAvailableToolLetsTheTestRun() {
        System.setProperty(ExternalTool.REQUIRED_PROPERTY, "true");
        assertThatCode(() -> ExternalTool.assumeAvailable(true, "smtp-source missing")).doesNotThrowAnyException();
    }

    @Test
    void aMissingToolSkipsTheTestAndSaysWhy() {
        assertThatThrownBy(() -> ExternalTool.assumeAvailable(false, "smtp-source missing"))
            .isInstanceOf(TestAbortedException.class)
            .hasMessageContaining("smtp-source missing");
    }

    @Test
    void aMissingToolFailsTheTestWhenToolsAreRequired() {
        System.setProperty(ExternalTool.REQUIRED_PROPERTY, "true");
        assertThatThrownBy(() -> ExternalTool.assumeAvailable(false, "smtp-source missing"))
            .isInstanceOf(AssertionError.class)
            .hasMessageContaining("smtp-source missing")
            .hasMessageContaining("tools.required");
    }
}
