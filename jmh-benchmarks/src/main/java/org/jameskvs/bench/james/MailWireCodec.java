package org.jameskvs.bench.james;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.ByteBuffer;

import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageWrapper;
import org.apache.mailet.Mail;
import org.jameskvs.james.codec.MailCodec;

/**
 * A way of turning a whole James {@link Mail} (envelope, attributes, MIME bytes) into one byte array
 * and back, as a queue must. {@link #forName} gives the plug-in's {@link MailCodec} and the James 3.8.1
 * baselines the codec benchmark compares it with.
 */
interface MailWireCodec {
    byte[] encode(Mail mail) throws Exception;

    Mail decode(byte[] bytes) throws Exception;

    static MailWireCodec forName(String name) {
        switch (name) {
            case "kvs":
                return new Kvs();
            case "james-activemq":
                return new ActiveMqMailCodec();
            case "james-java-serialization":
                return new JavaSerialization();
            default:
                throw new IllegalArgumentException("unknown codec " + name);
        }
    }

    /** The plug-in: {@link MailCodec}, the body of a KVS message. */
    final class Kvs implements MailWireCodec {
        @Override
        public byte[] encode(Mail mail) throws Exception {
            return MailCodec.encode(mail);
        }

        @Override
        public Mail decode(byte[] bytes) throws Exception {
            return MailCodec.decode(bytes, "bench");
        }
    }

    /**
     * James's file-based stores (FileMailRepository, 3.8.1): the {@link MailImpl} through Java
     * serialization (its {@code writeObject} writes the envelope and the attributes as JSON) and the
     * MIME bytes with {@code MimeMessage.writeTo}; here in one array, the object part length-prefixed.
     * Read back: {@code readObject}, then a {@link MimeMessageWrapper} over the MIME bytes.
     */
    final class JavaSerialization implements MailWireCodec {
        @Override
        public byte[] encode(Mail mail) throws Exception {
            ByteArrayOutputStream objectBytes = new ByteArrayOutputStream(1024);
            try (ObjectOutputStream out = new ObjectOutputStream(objectBytes)) {
                out.writeObject(mail);
            }
            long size = Math.max(0, mail.getMessage().getSize());
            ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) Math.min(Integer.MAX_VALUE - 16,
                4 + objectBytes.size() + size + 4096));
            DataOutputStream data = new DataOutputStream(bytes);
            data.writeInt(objectBytes.size());
            objectBytes.writeTo(data);
            data.flush();
            mail.getMessage().writeTo(bytes);
            return bytes.toByteArray();
        }

        @Override
        public Mail decode(byte[] bytes) throws Exception {
            int objectLength = ByteBuffer.wrap(bytes).getInt();
            MailImpl mail;
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes, 4, objectLength))) {
                mail = (MailImpl) in.readObject();
            } catch (ClassNotFoundException e) {
                throw new IOException(e);
            }
            int offset = 4 + objectLength;
            mail.setMessage(new MimeMessageWrapper(new org.jameskvs.james.codec.BytesMimeMessageSource("bench", bytes, offset, bytes.length - offset)));
            return mail;
        }
    }
}
