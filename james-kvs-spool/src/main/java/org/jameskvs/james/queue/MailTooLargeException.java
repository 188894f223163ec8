package org.jameskvs.james.queue;

import org.apache.james.queue.api.MailQueue;

/**
 * The mail is larger than the KVS servers store ({@code frameMaxBytes} minus the protocol's room):
 * a permanent refusal, never retried, since the same mail can never fit.
 */
public class MailTooLargeException extends MailQueue.MailQueueException {
    public MailTooLargeException(String message) {
        super(message);
    }
}
