package org.jameskvs.delivery;

import java.util.List;

import org.apache.james.core.MailAddress;

/**
 * What one mail transaction on an open connection did, per recipient: accepted (the final 250 came),
 * temporarily refused (retry later) or permanently refused (bounce), with the reply that decided.
 */
public record TransactionResult(List<MailAddress> delivered, List<MailAddress> temporary, List<MailAddress> permanent,
                                SmtpReply reply) {
}
