package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.MessageRecord;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.buf;
import static org.jameskvs.server.storage.StoreTestSupport.id;

/**
 * A PUT record from its position on is the wire's message record (the protocol doc's "The message
 * record is the journal's PUT tail"): GET copies those journal bytes as they are, so the bytes GET
 * answers, fresh and after a replay of the journal, are the protocol's record, pinned here by hand.
 */
class JournalPutTailTest {
    /** position 1, id "ab", priority 9, notBefore 0x102, state "s", body "xyz". */
    private static final String RECORD = "0000000000000001" + "02" + "6162" + "09" + "0000000000000102"
            + "00000001" + "73" + "00000003" + "78797a";
    /** The same after REPLACE to priority 4, notBefore 0x103, state "tt": the body and position stay. */
    private static final String REPLACED = "0000000000000001" + "02" + "6162" + "04" + "0000000000000103"
            + "00000002" + "7474" + "00000003" + "78797a";

    @TempDir
    Path dir;

    private StoreConfig config() {
        return StoreConfig.defaults(dir).withMinFreeDiskBytes(0);
    }

    private static String get(QueueStore store, QueueState q) {
        ByteBuf out = Unpooled.buffer();
        assertThat(store.get(q, id("ab"), out)).isEqualTo(Status.OK);
        return ByteBufUtil.hexDump(out);
    }

    @Test
    void getAnswersThePutRecordsTailWhichIsTheProtocolsMessageRecord() {
        ByteBuf expected = Unpooled.buffer();
        MessageRecord.write(expected, 1, id("ab"), 9, 0x102, buf("s"), buf("xyz"));
        assertThat(ByteBufUtil.hexDump(expected)).isEqualTo(RECORD);

        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            assertThat(store.put(q, id("ab"), 9, 0x102, buf("s"), buf("xyz"))).isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
            assertThat(get(store, q)).isEqualTo(RECORD);
        }
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.queue("q");
            assertThat(get(store, q)).as("after replay").isEqualTo(RECORD);
            assertThat(store.replace(q, id("ab"), 4, 0x103, buf("tt"))).isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
            assertThat(get(store, q)).isEqualTo(REPLACED);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(get(store, store.queue("q"))).as("replace after replay").isEqualTo(REPLACED);
        }
    }
}
