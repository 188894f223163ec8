package org.jameskvs.delivery;

/**
 * A connection could not be used: connect failed, no or a negative greeting, a 421, a timeout or a
 * closed socket. The session is gone; the reply (real or made up) says why.
 */
public final class SmtpFailure extends Exception {
    private final SmtpReply reply;
    private final boolean beforeGreeting;

    public SmtpFailure(SmtpReply reply, boolean beforeGreeting, Throwable cause) {
        super(reply.toString(), cause);
        this.reply = reply;
        this.beforeGreeting = beforeGreeting;
    }

    public SmtpReply reply() {
        return reply;
    }

    /** Failed at connect or greeting: the dead-destination signal (nothing was sent). */
    public boolean beforeGreeting() {
        return beforeGreeting;
    }
}
