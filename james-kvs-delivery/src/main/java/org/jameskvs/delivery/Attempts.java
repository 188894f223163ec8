package org.jameskvs.delivery;

import java.util.Optional;

import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.Mail;

/** The number of failed delivery attempts of a mail, kept as a mail attribute (it survives the queue). */
final class Attempts {
    static final AttributeName NAME = AttributeName.of("org.jameskvs.delivery.failedAttempts");

    private Attempts() {
    }

    static int of(Mail mail) {
        Optional<Attribute> attribute = mail.getAttribute(NAME);
        return attribute.map(a -> a.getValue().value()).filter(Number.class::isInstance)
            .map(v -> ((Number) v).intValue()).orElse(0);
    }

    static void set(Mail mail, int failures) {
        mail.setAttribute(new Attribute(NAME, AttributeValue.of(failures)));
    }
}
