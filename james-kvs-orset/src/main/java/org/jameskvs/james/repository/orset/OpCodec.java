package org.jameskvs.james.repository.orset;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * Bytes of an operation in a KVS message body. Version byte, type byte, then:
 * ADD: tag, key, timestamp, superseded tags, mail (a {@code MailCodec} encoding);
 * REMOVE: id, removed tags. A tag is node (UTF), session (long), counter (long).
 */
public final class OpCodec {
    public static final int VERSION = 1;
    static final int ADD = 1;
    static final int REMOVE = 2;

    private OpCodec() {
    }

    public static byte[] encodeAdd(OrSetOp.Add<?> add, byte[] mail) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(mail.length + 128);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeByte(ADD);
            writeTag(out, add.tag());
            byte[] key = add.key().getBytes(StandardCharsets.UTF_8);
            out.writeInt(key.length);
            out.write(key);
            out.writeLong(add.timestamp());
            writeTags(out, add.supersedes());
            out.writeInt(mail.length);
            out.write(mail);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    public static byte[] encodeRemove(OrSetOp.Remove<?> remove) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 32 * remove.tags().size());
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeByte(REMOVE);
            writeTag(out, remove.id());
            writeTags(out, remove.tags());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Decodes an operation; an ADD's payload is {@code payloadOf(add-without-payload, mail bytes)}
     * (the repository keeps a reference, not the mail).
     */
    public static <P> OrSetOp<P> decode(byte[] body, BiFunction<Tag, byte[], P> payloadOf) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(body))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown OR-set op version " + version);
            }
            int type = in.readUnsignedByte();
            Tag tag = readTag(in);
            if (type == REMOVE) {
                return new OrSetOp.Remove<>(tag, readTags(in));
            }
            if (type != ADD) {
                throw new IllegalArgumentException("unknown OR-set op type " + type);
            }
            String key = new String(in.readNBytes(in.readInt()), StandardCharsets.UTF_8);
            long timestamp = in.readLong();
            Set<Tag> supersedes = readTags(in);
            byte[] mail = in.readNBytes(in.readInt());
            return new OrSetOp.Add<>(key, tag, timestamp, supersedes, payloadOf.apply(tag, mail));
        } catch (IOException e) {
            throw new IllegalArgumentException("corrupt OR-set op", e);
        }
    }

    /** The mail bytes of an encoded ADD, or null if {@code body} is not an ADD of {@code tag}. */
    public static byte[] mailOf(byte[] body, Tag tag) {
        OrSetOp<byte[]> op = decode(body, (t, mail) -> mail);
        return op instanceof OrSetOp.Add<byte[]> add && add.tag().equals(tag) ? add.payload() : null;
    }

    private static void writeTag(DataOutputStream out, Tag tag) throws IOException {
        out.writeUTF(tag.node());
        out.writeLong(tag.session());
        out.writeLong(tag.counter());
    }

    private static Tag readTag(DataInputStream in) throws IOException {
        return new Tag(in.readUTF(), in.readLong(), in.readLong());
    }

    private static void writeTags(DataOutputStream out, Set<Tag> tags) throws IOException {
        out.writeInt(tags.size());
        for (Tag tag : tags) {
            writeTag(out, tag);
        }
    }

    private static Set<Tag> readTags(DataInputStream in) throws IOException {
        int n = in.readInt();
        Set<Tag> tags = new HashSet<>(Math.min(n, 4096));
        for (int i = 0; i < n; i++) {
            tags.add(readTag(in));
        }
        return tags;
    }
}
