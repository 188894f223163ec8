package org.jameskvs.james.queue;

import org.apache.james.queue.api.MailPrioritySupport;
import org.apache.mailet.Mail;

/**
 * James's {@code MAIL_PRIORITY} attribute mapped to a KVS priority level 0..9 (one KVS queue each).
 * Out-of-range values are clamped; a missing or non-integer value means "normal". "Normal" is read
 * from the running James at run time: 5 in James 3.8, 0 in James 3.9 (which also lets negative
 * priorities in; they share the lowest level, FIFO, as James 3.9's own contract expects).
 */
final class MailPriority {
    static final int LOWEST = 0;
    static final int HIGHEST = 9;
    /** Not MailPrioritySupport.NORMAL_PRIORITY directly: javac would inline the compile-time 3.8 value. */
    static final int NORMAL = clamp(runtimeNormalPriority());

    private MailPriority() {
    }

    static int of(Mail mail) {
        return mail.getAttribute(MailPrioritySupport.MAIL_PRIORITY)
            .flatMap(attribute -> attribute.getValue().valueAs(Integer.class))
            .map(MailPriority::clamp)
            .orElse(NORMAL);
    }

    static int clamp(int priority) {
        return Math.max(LOWEST, Math.min(HIGHEST, priority));
    }

    private static int runtimeNormalPriority() {
        try {
            return MailPrioritySupport.class.getField("NORMAL_PRIORITY").getInt(null);
        } catch (ReflectiveOperationException e) {
            return 5;
        }
    }
}
