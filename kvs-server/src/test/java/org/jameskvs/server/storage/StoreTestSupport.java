package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Small helpers shared by the storage tests. */
final class StoreTestSupport {
    private StoreTestSupport() {
    }

    /** A store whose journal rolls every second of {@code clock} (fault and block tests), no disk floor. */
    static StoreConfig secondlyJournal(java.nio.file.Path dir, net.openhft.chronicle.core.time.SetTimeProvider clock) {
        return StoreConfig.defaults(dir).withMinFreeDiskBytes(0).withTuning(JournalTuning.defaults()
                .withRollCycle(net.openhft.chronicle.queue.rollcycles.TestRollCycles.TEST_SECONDLY, clock)
                .withBlockSize(1 << 20));
    }

    /** Ids m{from} .. m{to - 1}. */
    static List<String> ids(int from, int to) {
        return java.util.stream.IntStream.range(from, to).mapToObj(i -> "m" + i).toList();
    }

    /** A recognisable message body of about 600 bytes. */
    static String body(int i) {
        return ("<BODY-" + i + ">").repeat(60);
    }

    static byte[] id(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static ByteBuf buf(String s) {
        return Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.UTF_8));
    }

    static ByteBuf buf(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }

    static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static void put(QueueStore store, QueueState q, String id, String body) {
        assertThat(store.put(q, id(id), 1, 0, buf("s-" + id), buf(body))).isEqualTo(Status.OK);
    }

    static StoredMessage get(QueueStore store, QueueState q, String id) {
        ByteBuf out = Unpooled.buffer();
        Status s = store.get(q, id(id), out);
        if (s == Status.NOT_FOUND) {
            assertThat(out.readableBytes()).isZero();
            return null;
        }
        assertThat(s).isEqualTo(Status.OK);
        StoredMessage m = StoredMessage.readRecord(out);
        assertThat(out.readableBytes()).isZero();
        return m;
    }

    record ReadResult(long nextPosition, List<StoredMessage> messages) {
        List<String> ids() {
            return messages.stream().map(m -> str(m.id())).toList();
        }
    }

    static ReadResult read(QueueStore store, QueueState q, long from, int maxCount, int maxBytes, long readyBefore) {
        ByteBuf out = Unpooled.buffer();
        assertThat(store.read(q, from, maxCount, maxBytes, readyBefore, out)).isEqualTo(Status.OK);
        long next = out.readLong();
        int count = out.readInt();
        List<StoredMessage> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            list.add(StoredMessage.readRecord(out));
        }
        assertThat(out.readableBytes()).isZero();
        return new ReadResult(next, list);
    }

    static List<String> all(QueueStore store, QueueState q) {
        return read(store, q, 0, 0, 0, 0).ids();
    }
}
