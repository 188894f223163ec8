package org.jameskvs.delivery;

import org.apache.mailet.Mail;

/** Hands a mail that cannot be delivered to James's bounce path (the configured bounce processor). */
@FunctionalInterface
public interface Bouncer {
    void bounce(Mail mail, SmtpReply reply) throws Exception;
}
