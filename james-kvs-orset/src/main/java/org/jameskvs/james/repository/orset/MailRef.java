package org.jameskvs.james.repository.orset;

/**
 * The payload of a live add in the local state: where its mail is (the log queue and the message
 * id, the tag). The state holds only these references; a retrieve fetches the mail by GET.
 */
record MailRef(String log, Tag tag) {
}
