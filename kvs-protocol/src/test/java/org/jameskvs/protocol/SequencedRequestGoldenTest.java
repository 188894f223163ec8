package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The bytes of the fields protocol version 2 added, as the package doc draws them. */
class SequencedRequestGoldenTest {
    private static String hex(java.util.function.Consumer<ByteBuf> writer) {
        ByteBuf b = Unpooled.buffer();
        writer.accept(b);
        return ByteBufUtil.hexDump(b);
    }

    private static final byte[] AB = "ab".getBytes(StandardCharsets.US_ASCII);

    @Test
    void sequencedDeleteCarriesTheFlagAndTheQueueSeqFirst() {
        assertThat(hex(b -> Requests.deleteSequenced(b, 7, 3, 42, AB))).isEqualTo(
                "0000001b" + "02" + "04" + "0002" + "0000000000000007" + "00000003"
                        + "000000000000002a" + "02" + "6162");
    }

    @Test
    void sequencedReplacingPutKeepsTheReplaceFlag() {
        assertThat(hex(b -> Requests.putSequenced(b, 1, 2, RequestDescriptor.FLAG_REPLACE_EXISTING, 5, AB, 9, 0,
                new byte[0], AB))).isEqualTo(
                "0000002a" + "02" + "03" + "0003" + "0000000000000001" + "00000002"
                        + "0000000000000005" + "02" + "6162" + "09" + "0000000000000000" + "00000000" + "6162");
    }

    @Test
    void sequencedClearAndRebase() {
        assertThat(hex(b -> Requests.clearSequenced(b, 1, 2, 6))).isEqualTo(
                "00000018" + "02" + "0a" + "0002" + "0000000000000001" + "00000002" + "0000000000000006");
        assertThat(hex(b -> Requests.rebase(b, 1, 2, 6, -1))).isEqualTo(
                "00000020" + "02" + "0e" + "0000" + "0000000000000001" + "00000002" + "0000000000000006"
                        + "ffffffffffffffff");
    }

    @Test
    void theCommitPointFollowsTheQueueSeqUnderFlag0x0008() {
        assertThat(hex(b -> Requests.deleteSequenced(b, 7, 3, 42, 40, AB))).isEqualTo(
                "00000023" + "02" + "04" + "000a" + "0000000000000007" + "00000003"
                        + "000000000000002a" + "0000000000000028" + "02" + "6162");
        assertThat(hex(b -> Requests.putSequenced(b, 1, 2, RequestDescriptor.FLAG_REPLACE_EXISTING, 5, 4, AB, 9, 0,
                new byte[0], AB))).isEqualTo(
                "00000032" + "02" + "03" + "000b" + "0000000000000001" + "00000002"
                        + "0000000000000005" + "0000000000000004" + "02" + "6162" + "09" + "0000000000000000"
                        + "00000000" + "6162");
        assertThat(hex(b -> Requests.deleteSequenced(b, 7, 3, 42, -1, AB))).as("no commit point: the plain form")
                .isEqualTo(hex(b -> Requests.deleteSequenced(b, 7, 3, 42, AB)));
    }

    @Test
    void commitCarriesTheCommittedSeq() {
        assertThat(hex(b -> Requests.commit(b, 1, 2, 6))).isEqualTo(
                "00000018" + "02" + "0f" + "0000" + "0000000000000001" + "00000002" + "0000000000000006");
    }

    @Test
    void anUncommittedReadIsAReadWithFlag0x0010() {
        assertThat(hex(b -> Requests.readUncommitted(b, 1, 2, 3, 4, 5, 6))).isEqualTo(
                "00000028" + "02" + "07" + "0010" + "0000000000000001" + "00000002"
                        + "0000000000000003" + "00000004" + "00000005" + "0000000000000006");
    }
}
