package org.jameskvs.testkit;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

class ExternalToolTest {

    /** bin/test runs every test JVM with -Dtools.required=true: each test sets what it needs and puts it back. */
    private final String outer = System.getProperty(ExternalTool.REQUIRED_PROPERTY);

    @AfterEach
    void restoreProperty() {
        if (outer == null) {
            System.clearProperty(ExternalTool.REQUIRED_PROPERTY);
        } else {
            System.setProperty(ExternalTool.REQUIRED_PROPERTY, outer);
        }
    }

    @Test
    void anAvailableToolLetsTheTestRun() {
        System.setProperty(ExternalTool.REQUIRED_PROPERTY, "true");
        assertThatCode(() -> ExternalTool.assumeAvailable(true, "smtp-source missing")).doesNotThrowAnyException();
    }

    @Test
    void aMissingToolSkipsTheTestAndSaysWhy() {
        System.setProperty(ExternalTool.REQUIRED_PROPERTY, "false");
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
