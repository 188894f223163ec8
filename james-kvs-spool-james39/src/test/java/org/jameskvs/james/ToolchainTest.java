package org.jameskvs.james;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.james.queue.api.MailQueue;
import org.junit.jupiter.api.Test;

/** Guards the build trick: these tests must run on JDK >= 21 against the James 3.9.0 (jakarta) API. */
class ToolchainTest {
    @Test
    void runsOnJdk21OrLaterAgainstJakartaApi() throws Exception {
        assertThat(Runtime.version().feature()).isGreaterThanOrEqualTo(21);
        assertThat(MailQueue.MailQueueException.class.getSuperclass().getName())
            .isEqualTo("jakarta.mail.MessagingException");
    }
}
