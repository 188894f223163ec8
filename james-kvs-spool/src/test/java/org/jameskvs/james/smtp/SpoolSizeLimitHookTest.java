package org.jameskvs.james.smtp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.Properties;

import org.apache.james.core.MailAddress;
import org.apache.james.core.MaybeSender;
import org.apache.james.protocols.smtp.MailEnvelope;
import org.apache.james.protocols.smtp.hook.HookResult;
import org.apache.james.protocols.smtp.hook.HookReturnCode;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.junit.jupiter.api.Test;

class SpoolSizeLimitHookTest {
    private static final int FRAME_MAX_BYTES = 1 << 20;
    private final KvsSpoolConfiguration configuration = configuration();
    private final SpoolSizeLimitHook hook = new SpoolSizeLimitHook(configuration);

    @Test
    void aMessageTheSpoolStoresGoesOn() {
        assertThat(hook.onMessage(null, envelopeOf(configuration.maxSmtpMessageBytes()))).isEqualTo(HookResult.DECLINED);
    }

    @Test
    void aLargerOneIsRefusedForGoodWith552() {
        HookResult result = hook.onMessage(null, envelopeOf(configuration.maxSmtpMessageBytes() + 1L));

        assertThat(result.getResult()).isEqualTo(HookReturnCode.deny());
        assertThat(result.getSmtpRetCode()).isEqualTo("552");
        assertThat(result.getSmtpDescription()).startsWith("5.3.4").contains(String.valueOf(configuration.maxSmtpMessageBytes()));
    }

    @Test
    void theLimitLeavesRoomForTheEnvelopeAndTheProtocolInAFrame() {
        assertThat(configuration.maxSmtpMessageBytes()).isEqualTo(FRAME_MAX_BYTES
            - KvsSpoolConfiguration.PROTOCOL_RESERVE_BYTES - KvsSpoolConfiguration.ENVELOPE_RESERVE_BYTES);
    }

    private static KvsSpoolConfiguration configuration() {
        Properties p = new Properties();
        p.setProperty("frameMaxBytes", String.valueOf(FRAME_MAX_BYTES));
        return KvsSpoolConfiguration.from(p);
    }

    /** What James hands a message hook: here only the size matters. */
    private static MailEnvelope envelopeOf(long size) {
        return new MailEnvelope() {
            @Override
            public long getSize() {
                return size;
            }

            @Override
            public List<MailAddress> getRecipients() {
                return List.of();
            }

            @Override
            public MaybeSender getMaybeSender() {
                return MaybeSender.nullSender();
            }

            @Override
            public OutputStream getMessageOutputStream() {
                throw new UnsupportedOperationException();
            }

            @Override
            public InputStream getMessageInputStream() {
                throw new UnsupportedOperationException();
            }
        };
    }
}
