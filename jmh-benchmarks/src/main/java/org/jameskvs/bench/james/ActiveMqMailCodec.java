package org.jameskvs.bench.james;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringTokenizer;
import java.util.stream.Collectors;

import javax.jms.JMSException;
import javax.jms.Message;

import org.apache.activemq.command.ActiveMQObjectMessage;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.command.MessageId;
import org.apache.activemq.command.ProducerId;
import org.apache.activemq.openwire.OpenWireFormat;
import org.apache.activemq.util.ByteSequence;
import org.apache.james.core.MailAddress;
import org.apache.james.core.MaybeSender;
import org.apache.james.queue.jms.JMSSupport;
import org.apache.james.queue.jms.MimeMessageObjectMessageSource;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageWrapper;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.Mail;
import org.apache.mailet.PerRecipientHeaders;

import com.google.common.base.Joiner;
import com.google.common.base.Splitter;

/**
 * The wire form of a mail in James 3.8.1's ActiveMQ mail queue (the default persistent queue of
 * James's Spring and JPA servers): {@code JMSCacheableMailQueue.getJMSProperties} (envelope as JMS
 * properties, each attribute as its JSON string, recipients joined by ';') and {@code produceMail}
 * (the MIME bytes from {@code MimeMessage.writeTo} set as the body of an {@code ObjectMessage}, i.e.
 * Java-serialized), marshalled by ActiveMQ's OpenWire format exactly as the client sends it to the
 * broker. Decoding is the consumer side: OpenWire unmarshal, then {@code populateMail} and
 * {@code new MimeMessageWrapper(new MimeMessageObjectMessageSource(message))} as in 3.8.1.
 *
 * <p>The two James methods are instance methods of a queue that needs a live JMS connection, so
 * their bodies are reproduced here line for line (checked against the 3.8.1 bytecode); the OpenWire
 * marshalling and {@link MimeMessageObjectMessageSource} are ActiveMQ's and James's own classes.
 * Not measured: the broker itself (KahaDB journal, dispatch), which a real James enqueue also pays.
 */
final class ActiveMqMailCodec implements MailWireCodec {
    private static final String SEPARATOR = JMSSupport.JAMES_MAIL_SEPARATOR;
    private static final Joiner JOINER = Joiner.on(SEPARATOR).skipNulls();
    private static final Splitter SPLITTER = Splitter.on(SEPARATOR).omitEmptyStrings().trimResults();
    private static final ActiveMQQueue DESTINATION = new ActiveMQQueue("spool");
    private static final ProducerId PRODUCER = new ProducerId("ID:bench-1700000000000-1:1:1:1");

    /** OpenWire as the 5.17 client speaks it, without the per-connection marshal cache (one message decoded many times). */
    private final OpenWireFormat wireFormat;
    private long sequence;

    ActiveMqMailCodec() {
        wireFormat = new OpenWireFormat(OpenWireFormat.DEFAULT_WIRE_VERSION);
        wireFormat.setTightEncodingEnabled(true);
        wireFormat.setCacheEnabled(false);
    }

    @Override
    public byte[] encode(Mail mail) throws Exception {
        ActiveMQObjectMessage message = new ActiveMQObjectMessage();
        // What the producer sets on send.
        message.setDestination(DESTINATION);
        message.setMessageId(new MessageId(PRODUCER, ++sequence));
        message.setPersistent(true);
        message.setPriority((byte) 5);
        message.setTimestamp(System.currentTimeMillis());
        // JMSCacheableMailQueue.produceMail
        for (Map.Entry<String, Object> entry : jmsProperties(mail, 0L).entrySet()) {
            message.setObjectProperty(entry.getKey(), entry.getValue());
        }
        long size = mail.getMessageSize();
        ByteArrayOutputStream out = size > -1 ? new ByteArrayOutputStream((int) size) : new ByteArrayOutputStream();
        mail.getMessage().writeTo(out);
        message.setObject(out.toByteArray());
        ByteSequence wire = wireFormat.marshal(message);
        wire.compact();
        return wire.getData();
    }

    @Override
    public Mail decode(byte[] bytes) throws Exception {
        ActiveMQObjectMessage message = (ActiveMQObjectMessage) wireFormat.unmarshal(new ByteSequence(bytes));
        // JMSCacheableMailQueue.createMail
        return populateMail(message)
            .mimeMessage(new MimeMessageWrapper(new MimeMessageObjectMessageSource(message)))
            .build();
    }

    /** JMSCacheableMailQueue.getJMSProperties, James 3.8.1. */
    private static Map<String, Object> jmsProperties(Mail mail, long nextDelivery) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(JMSSupport.JAMES_NEXT_DELIVERY, nextDelivery);
        props.put(JMSSupport.JAMES_MAIL_ERROR_MESSAGE, mail.getErrorMessage());
        props.put(JMSSupport.JAMES_MAIL_LAST_UPDATED, mail.getLastUpdated().getTime());
        props.put(JMSSupport.JAMES_MAIL_MESSAGE_SIZE, mail.getMessageSize());
        props.put(JMSSupport.JAMES_MAIL_NAME, mail.getName());
        mail.getPerRecipientSpecificHeaders().getHeadersByRecipient().asMap()
            .forEach((recipient, headers) -> props.put(JMSSupport.JAMES_MAIL_PER_RECIPIENT_HEADERS + "-" + recipient.asString(),
                Joiner.on('\n').join(headers.stream().map(PerRecipientHeaders.Header::asString).collect(Collectors.toList()))));
        props.put(JMSSupport.JAMES_MAIL_RECIPIENTS, JOINER.join(mail.getRecipients()));
        props.put(JMSSupport.JAMES_MAIL_REMOTEADDR, mail.getRemoteAddr());
        props.put(JMSSupport.JAMES_MAIL_REMOTEHOST, mail.getRemoteHost());
        String sender = mail.getMaybeSender().asString("");
        mail.attributes().forEach(attribute -> attribute.getValue().toJson()
            .ifPresent(json -> props.put(attribute.getName().asString(), json.toString())));
        props.put(JMSSupport.JAMES_MAIL_ATTRIBUTE_NAMES, JOINER.join(
            mail.attributeNames().map(AttributeName::asString).collect(Collectors.toList())));
        props.put(JMSSupport.JAMES_MAIL_SENDER, sender);
        props.put(JMSSupport.JAMES_MAIL_STATE, mail.getState());
        return props;
    }

    /** JMSCacheableMailQueue.populateMail, James 3.8.1. */
    private static MailImpl.Builder populateMail(Message message) throws JMSException {
        String name = message.getStringProperty(JMSSupport.JAMES_MAIL_NAME);
        MailImpl.Builder builder = MailImpl.builder().name(name);
        builder.errorMessage(message.getStringProperty(JMSSupport.JAMES_MAIL_ERROR_MESSAGE));
        builder.lastUpdated(new Date(message.getLongProperty(JMSSupport.JAMES_MAIL_LAST_UPDATED)));

        PerRecipientHeaders perRecipientHeaders = new PerRecipientHeaders();
        @SuppressWarnings("unchecked")
        List<String> propertyNames = Collections.list((java.util.Enumeration<String>) message.getPropertyNames());
        String prefix = JMSSupport.JAMES_MAIL_PER_RECIPIENT_HEADERS + "-";
        for (String property : propertyNames) {
            if (property.startsWith(prefix)) {
                try {
                    MailAddress address = new MailAddress(property.substring(prefix.length()));
                    for (String header : Splitter.on('\n').split(message.getStringProperty(property))) {
                        perRecipientHeaders.addHeaderForRecipient(PerRecipientHeaders.Header.fromString(header), address);
                    }
                } catch (javax.mail.internet.AddressException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        if (!perRecipientHeaders.getHeadersByRecipient().isEmpty()) {
            builder.addAllHeadersForRecipients(perRecipientHeaders);
        }

        StringTokenizer recipients = new StringTokenizer(message.getStringProperty(JMSSupport.JAMES_MAIL_RECIPIENTS), SEPARATOR);
        while (recipients.hasMoreTokens()) {
            try {
                builder.addRecipient(new MailAddress(recipients.nextToken()));
            } catch (javax.mail.internet.AddressException e) {
                throw new IllegalStateException(e);
            }
        }
        builder.remoteAddr(message.getStringProperty(JMSSupport.JAMES_MAIL_REMOTEADDR));
        builder.remoteHost(message.getStringProperty(JMSSupport.JAMES_MAIL_REMOTEHOST));

        String attributeNames = message.getStringProperty(JMSSupport.JAMES_MAIL_ATTRIBUTE_NAMES);
        for (String attributeName : SPLITTER.split(attributeNames)) {
            Object value = message.getObjectProperty(attributeName);
            if (value instanceof String) {
                try {
                    builder.addAttribute(new Attribute(AttributeName.of(attributeName), AttributeValue.fromJsonString((String) value)));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        builder.sender(MaybeSender.getMailSender(message.getStringProperty(JMSSupport.JAMES_MAIL_SENDER)).asOptional());
        builder.state(message.getStringProperty(JMSSupport.JAMES_MAIL_STATE));
        return builder;
    }
}
