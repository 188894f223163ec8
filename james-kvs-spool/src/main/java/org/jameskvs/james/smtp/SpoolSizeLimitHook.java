package org.jameskvs.james.smtp;

import javax.inject.Inject;

import org.apache.james.filesystem.api.FileSystem;
import org.apache.james.protocols.smtp.MailEnvelope;
import org.apache.james.protocols.smtp.SMTPSession;
import org.apache.james.protocols.smtp.dsn.DSNStatus;
import org.apache.james.protocols.smtp.hook.HookResult;
import org.apache.james.protocols.smtp.hook.HookReturnCode;
import org.apache.james.protocols.smtp.hook.MessageHook;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.guice.KvsSpoolModule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers {@code 552 5.3.4} at the end of DATA to a message larger than the KVS spool can store
 * ({@link KvsSpoolConfiguration#maxSmtpMessageBytes()}), before James enqueues it.
 *
 * <p>Why a hook: James answers any failed enqueue with a 451 (its SendMailHandler), so a mail the
 * spool refuses for its size would be retried by the sender for ever. James's own
 * {@code maxmessagesize} gives the 552 too, and should be set below this limit; this hook keeps the
 * refusal permanent when it is not (0 = unlimited, or too large). Message hooks run before James's
 * enqueueing hook, wherever this one is listed in smtpserver.xml's handler chain.
 */
public class SpoolSizeLimitHook implements MessageHook {
    private static final Logger LOGGER = LoggerFactory.getLogger(SpoolSizeLimitHook.class);
    private final long maxMessageBytes;
    private final HookResult tooLarge;

    /**
     * Reads kvs-spool.properties itself rather than asking for the plug-in's binding, so James also
     * starts with this hook when its stock queues are in use (no KVS module installed).
     */
    @Inject
    public SpoolSizeLimitHook(FileSystem fileSystem) {
        this(KvsSpoolModule.configurationIn(fileSystem));
    }

    public SpoolSizeLimitHook(KvsSpoolConfiguration configuration) {
        this.maxMessageBytes = configuration.maxSmtpMessageBytes();
        this.tooLarge = HookResult.builder()
            .hookReturnCode(HookReturnCode.deny())
            .smtpReturnCode("552")
            .smtpDescription(DSNStatus.getStatus(DSNStatus.PERMANENT, DSNStatus.SYSTEM_MSG_TOO_BIG)
                + " Message size exceeds the spool's limit of " + maxMessageBytes + " bytes")
            .build();
    }

    @Override
    public HookResult onMessage(SMTPSession session, MailEnvelope mail) {
        long size = mail.getSize();
        if (size <= maxMessageBytes) {
            return HookResult.DECLINED;
        }
        LOGGER.info("Refused a message of {} bytes from {} (the KVS spool stores at most {})", size,
            mail.getMaybeSender().asString(), maxMessageBytes);
        return tooLarge;
    }
}
