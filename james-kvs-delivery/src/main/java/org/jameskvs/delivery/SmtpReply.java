package org.jameskvs.delivery;

/**
 * One SMTP reply (the last line's code, the lines' text joined), or a reply made up for a failure that
 * left no reply (connect refused, timeout, connection closed): those carry code 0 and say so.
 */
public record SmtpReply(int code, String text) {

    public static SmtpReply noReply(String what) {
        return new SmtpReply(0, what);
    }

    public boolean positive() {
        return code >= 200 && code < 400;
    }

    public boolean permanent() {
        return code >= 500 && code < 600;
    }

    /** 421: the server is closing the connection ("service not available"), the reply a busy destination gives. */
    public boolean serviceNotAvailable() {
        return code == 421;
    }

    @Override
    public String toString() {
        return code == 0 ? text : code + " " + text;
    }
}
