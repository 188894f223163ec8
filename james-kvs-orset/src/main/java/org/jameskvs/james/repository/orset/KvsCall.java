package org.jameskvs.james.repository.orset;

import javax.mail.MessagingException;

/** A KVS request made for a James call: its failure is reported the way James expects. */
@FunctionalInterface
interface KvsCall<T> {
    T run();

    static <T> T forJames(KvsCall<T> call) throws MessagingException {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw new MessagingException("KVS request failed", e);
        }
    }
}
