package org.jameskvs.delivery;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.james.core.MailAddress;

/**
 * What one mail transaction on an open connection did, per recipient: accepted (the final 250 came),
 * temporarily refused (retry later) or permanently refused (bounce), with the reply that decided the
 * transaction, and {@code refusals}: each recipient refused at its RCPT with that RCPT's own reply (in a
 * transaction where others were accepted, the deciding reply is the 250 of the end of DATA: a refused
 * recipient's bounce and the reply rules need its own).
 */
public record TransactionResult(List<MailAddress> delivered, List<MailAddress> temporary, List<MailAddress> permanent,
                                SmtpReply reply, Map<MailAddress, SmtpReply> refusals) {

    public TransactionResult {
        refusals = Map.copyOf(refusals);
    }

    /** No recipient refused at its RCPT with a reply of its own: every one has the deciding reply. */
    public TransactionResult(List<MailAddress> delivered, List<MailAddress> temporary, List<MailAddress> permanent, SmtpReply reply) {
        this(delivered, temporary, permanent, reply, Map.of());
    }

    /** The reply that decided {@code recipient}'s fate: its RCPT refusal, else the transaction's. */
    public SmtpReply replyFor(MailAddress recipient) {
        return refusals.getOrDefault(recipient, reply);
    }

    /**
     * Every negative reply of the transaction, once each: the RCPT refusals, then the deciding reply when
     * it is negative and not one of them (what the reply rules count).
     */
    public List<SmtpReply> negativeReplies() {
        List<SmtpReply> replies = new ArrayList<>(refusals.values());
        if (reply != null && !reply.positive() && replies.stream().noneMatch(r -> r == reply)) {
            replies.add(reply);
        }
        return replies;
    }
}
