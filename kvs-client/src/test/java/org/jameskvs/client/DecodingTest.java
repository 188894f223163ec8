package org.jameskvs.client;

import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.client.TestSupport.await;
import static org.jameskvs.client.TestSupport.bytes;

/** Every response payload, end to end through the fake server. */
class DecodingTest {
    private FakeKvsServer server;
    private KvsClient client;
    private KvsQueue q;

    @BeforeEach
    void start() throws Exception {
        server = new FakeKvsServer("u", "p");
        client = KvsClient.connect(server.config().build());
        OpenResult opened = await(client.open("spool", OpenOptions.writer("node-1", 3)));
        assertThat(opened.isOk()).isTrue();
        assertThat(opened.epoch()).isEqualTo(3);
        assertThat(opened.size()).isZero();
        q = opened.queue();
        assertThat(q.name()).isEqualTo("spool");
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    @Test
    void getReturnsTheWholeRecord() {
        await(q.put(bytes("m1"), 7, 1234, bytes("state"), bytes("hello")));
        GetResult got = await(q.get(bytes("m1")));
        assertThat(got.isOk()).isTrue();
        StoredMessage m = got.message();
        assertThat(m.position()).isEqualTo(1);
        assertThat(m.id()).isEqualTo(bytes("m1"));
        assertThat(m.priority()).isEqualTo(7);
        assertThat(m.notBefore()).isEqualTo(1234);
        assertThat(m.state()).isEqualTo(bytes("state"));
        assertThat(m.body()).isEqualTo(bytes("hello"));
        assertThat(got.txn()).isEqualTo(1);

        GetResult missing = await(q.get(bytes("nope")));
        assertThat(missing.status()).isEqualTo(Status.NOT_FOUND);
        assertThat(missing.reason()).isEqualTo("no message nope");
        assertThat(missing.message()).isNull();
    }

    @Test
    void readReturnsABlockInPositionOrder() {
        for (int i = 1; i <= 5; i++) {
            await(q.put(bytes("m" + i), 0, i == 3 ? 10_000 : 0, null, bytes("body" + i)));
        }
        ReadResult all = await(q.read(1, 10, 1 << 20, 0));
        assertThat(all.isOk()).isTrue();
        assertThat(all.messages()).extracting(StoredMessage::position).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(all.nextPosition()).isEqualTo(6);

        ReadResult ready = await(q.read(2, 2, 1 << 20, 5_000));
        assertThat(ready.messages()).extracting(m -> new String(m.body())).containsExactly("body2", "body4");
        assertThat(ready.nextPosition()).isEqualTo(5);

        ReadResult none = await(q.read(6, 10, 1 << 20, 0));
        assertThat(none.messages()).isEmpty();
    }

    @Test
    void statListAndPing() {
        await(q.put(bytes("m1"), 0, 500, null, bytes("12345")));
        await(q.put(bytes("m2"), 0, 100, null, bytes("123")));
        QueueStat stat = await(q.stat());
        assertThat(stat.isOk()).isTrue();
        assertThat(stat.size()).isEqualTo(2);
        assertThat(stat.bytes()).isEqualTo(8);
        assertThat(stat.firstPosition()).isEqualTo(1);
        assertThat(stat.nextPosition()).isEqualTo(3);
        assertThat(stat.earliestNotBefore()).isEqualTo(100);
        assertThat(stat.epoch()).isEqualTo(3);
        assertThat(stat.owner()).isEqualTo("node-1");
        assertThat(stat.txn()).isEqualTo(2);

        await(client.open("other", OpenOptions.reader()));
        ListResult list = await(client.listQueues());
        assertThat(list.isOk()).isTrue();
        assertThat(list.queues()).containsExactly(new QueueInfo("spool", 2, 2), new QueueInfo("other", 0, 0));

        Ack pong = await(client.ping());
        assertThat(pong.isOk()).isTrue();
        assertThat(Math.abs(pong.value() - System.currentTimeMillis())).isLessThan(5000);
    }

    /** OPEN and STAT end with the flags, the last seq and the digest (protocol version 2); REBASE sets the last two. */
    @Test
    void openAndStatEndWithSeqAndDigestThatRebaseSets() {
        QueueStat stat = await(q.stat());
        assertThat(stat.isOk()).isTrue();
        assertThat(stat.flags()).isZero();
        assertThat(stat.lastSeq()).isEqualTo(7);
        assertThat(stat.digest()).isEqualTo(0x0123_4567_89AB_CDEFL);
        OpenResult again = await(client.open("spool", OpenOptions.writer("node-1", 4)));
        assertThat(again.isOk()).isTrue();
        assertThat(again.lastSeq()).isEqualTo(7);
        assertThat(again.digest()).isEqualTo(0x0123_4567_89AB_CDEFL);

        assertThat(await(again.queue().rebase(41, -2L)).isOk()).isTrue();
        QueueStat rebased = await(again.queue().stat());
        assertThat(rebased.lastSeq()).isEqualTo(41);
        assertThat(rebased.digest()).isEqualTo(-2L);
        assertThat(await(client.open("spool", OpenOptions.writer("node-1", 5))).lastSeq()).isEqualTo(41);
    }

    @Test
    void damagedQueueFlagEndsOpenAndStat() {
        server.queueFlags = QueueFlags.DAMAGED;
        OpenResult opened = await(client.open("spool", OpenOptions.writer("node-1", 4)));
        assertThat(opened.isOk()).isTrue();
        assertThat(opened.flags()).isEqualTo(QueueFlags.DAMAGED);
        assertThat(opened.damaged()).isTrue();
        assertThat(opened.size()).as("the fields before the flags are unchanged").isZero();
        QueueStat stat = await(opened.queue().stat());
        assertThat(stat.damaged()).isTrue();
        assertThat(stat.owner()).isEqualTo("node-1");

        server.queueFlags = 0;
        assertThat(await(opened.queue().stat()).damaged()).isFalse();
        assertThat(await(client.open("spool", OpenOptions.writer("node-1", 5))).damaged()).isFalse();
    }

    @Test
    void mutationsAndErrors() {
        assertThat(await(q.put(bytes("m1"), 0, 0, null, bytes("x"))).value()).isEqualTo(1);
        Ack dup = await(q.put(bytes("m1"), 0, 0, null, bytes("x")));
        assertThat(dup.status()).isEqualTo(Status.DUPLICATE_ID);
        assertThat(dup.reason()).isEqualTo(Status.DUPLICATE_ID.description());

        assertThat(await(q.replace(bytes("m1"), 9, 77, bytes("retry=1"))).isOk()).isTrue();
        StoredMessage m = await(q.get(bytes("m1"))).message();
        assertThat(m.priority()).isEqualTo(9);
        assertThat(m.notBefore()).isEqualTo(77);
        assertThat(m.state()).isEqualTo(bytes("retry=1"));

        assertThat(await(q.delete(bytes("m1"))).txn()).isEqualTo(3);
        assertThat(await(q.delete(bytes("m1"))).status()).isEqualTo(Status.NOT_FOUND);
        await(q.put(bytes("m2"), 0, 0, null, bytes("x")));
        assertThat(await(q.clear()).isOk()).isTrue();
        assertThat(await(q.stat()).size()).isZero();

        // Checked before anything is sent.
        assertThat(await(q.put(new byte[0], 0, 0, null, bytes("x"))).status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(await(q.put(bytes("p"), 256, 0, null, bytes("x"))).status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(await(q.get(new byte[256])).status()).isEqualTo(Status.BAD_REQUEST);

        assertThat(await(q.drop()).isOk()).isTrue();
        assertThat(await(q.stat()).status()).isEqualTo(Status.BAD_HANDLE);
        assertThat(await(client.listQueues()).queues()).isEmpty();
    }

    @Test
    void closedQueueRefusesCalls() {
        QueueHandle handle = (QueueHandle) q;
        assertThat(await(handle.closeAsync()).isOk()).isTrue();
        assertThat(await(q.stat()).status()).isEqualTo(Status.BAD_HANDLE);
        List<FakeKvsServer.Received> closes = server.log.stream()
                .filter(r -> r.opcode() == org.jameskvs.protocol.Opcode.CLOSE).toList();
        assertThat(closes).hasSize(1);
    }
}
