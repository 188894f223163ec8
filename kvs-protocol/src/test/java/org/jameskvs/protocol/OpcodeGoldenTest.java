package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every operation's request and OK answer, and the error answers, as exact bytes written by their
 * codec (hand-written from the package doc's tables), then read back by the same codec. A change of
 * a layout fails here before it reaches a peer or a journal.
 */
class OpcodeGoldenTest {
    private static final byte[] AB = bytes("ab");
    private static final byte[] S = bytes("s");
    private static final byte[] XYZ = bytes("xyz");
    /** The message record of (position 4, id ab, priority 9, notBefore 0x102, state s, body xyz): 32 bytes. */
    private static final String RECORD = "0000000000000004" + "02" + "6162" + "09" + "0000000000000102"
            + "00000001" + "73" + "00000003" + "78797a";

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static String hex(Consumer<ByteBuf> writer) {
        ByteBuf b = Unpooled.buffer();
        writer.accept(b);
        return ByteBufUtil.hexDump(b);
    }

    /** The frame of {@code hex} as the frame decoder emits it (from the version byte), reader index at the payload. */
    private static ByteBuf requestPayload(String hex, Opcode op, long seq, int handle, int flags) {
        ByteBuf frame = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex));
        assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
        assertThat(Frames.requestOpcode(frame)).isEqualTo(op.code());
        assertThat(Frames.requestSequence(frame)).isEqualTo(seq);
        assertThat(Frames.requestHandle(frame)).isEqualTo(handle);
        assertThat(Frames.requestFlags(frame)).isEqualTo(flags);
        return Frames.skipRequestHeader(frame);
    }

    private static ByteBuf responsePayload(String hex, Opcode op, Status status, long seq, long txn) {
        ByteBuf frame = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex));
        assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
        assertThat(Frames.responseOpcode(frame)).isEqualTo(op.code());
        assertThat(Frames.responseStatus(frame)).isEqualTo(status);
        assertThat(Frames.responseSequence(frame)).isEqualTo(seq);
        assertThat(Frames.responseTxn(frame)).isEqualTo(txn);
        return Frames.skipResponseHeader(frame);
    }

    private static String emptyOk(String opcode, long seq, long txn) {
        return "00000014" + "02" + opcode + "0000" + String.format("%016x", seq) + String.format("%016x", txn);
    }

    private static void assertRecord(StoredMessage m) {
        assertThat(m).isEqualTo(new StoredMessage(4, AB, 9, 0x102, S, XYZ));
    }

    // ---- PUT

    @Test
    void putRequest() {
        String hex = "00000024" + "02" + "03" + "0000" + "0000000000000007" + "00000003"
                + "02" + "6162" + "09" + "0000000000000102" + "00000001" + "73" + "78797a";
        assertThat(hex(b -> Requests.put(b, 7, 3, AB, 9, 0x102, S, XYZ))).isEqualTo(hex);
        PutCodec put = new PutCodec().wrap(requestPayload(hex, Opcode.PUT, 7, 3, 0), 0);
        assertThat(put.position()).isZero();
        assertThat(put.replaceExisting()).isFalse();
        assertThat(put.id()).isEqualTo(AB);
        assertThat(put.priority()).isEqualTo(9);
        assertThat(put.notBefore()).isEqualTo(0x102);
        assertThat(ByteBufUtil.getBytes(put.state())).isEqualTo(S);
        assertThat(ByteBufUtil.getBytes(put.body())).isEqualTo(XYZ);
    }

    @Test
    void sequencedPositionedReplacingPutRequest() {
        int flags = RequestDescriptor.FLAG_REPLACE_EXISTING | RequestDescriptor.FLAG_SEQUENCED
                | RequestDescriptor.FLAG_POSITIONED;
        String hex = "00000034" + "02" + "03" + "0007" + "0000000000000007" + "00000003"
                + "0000000000000005" + "0000000000000004"
                + "02" + "6162" + "09" + "0000000000000102" + "00000001" + "73" + "78797a";
        assertThat(hex(b -> PutCodec.writeRequest(b, 7, 3, flags, 5, 4, AB, 9, 0x102, S, XYZ))).isEqualTo(hex);
        ByteBuf in = requestPayload(hex, Opcode.PUT, 7, 3, flags);
        assertThat(new SequencedPrefix().wrap(in, flags).queueSeq()).isEqualTo(5);
        PutCodec put = new PutCodec().wrap(in, flags);
        assertThat(put.position()).isEqualTo(4);
        assertThat(put.replaceExisting()).isTrue();
        assertThat(put.id()).isEqualTo(AB);
        assertThat(ByteBufUtil.getBytes(put.body())).isEqualTo(XYZ);
    }

    @Test
    void putAtWritesThePositionedFlagAndPosition() {
        assertThat(hex(b -> Requests.putAt(b, 7, 3, 0, 4, AB, 9, 0x102, S, XYZ))).isEqualTo(
                "0000002c" + "02" + "03" + "0004" + "0000000000000007" + "00000003" + "0000000000000004"
                        + "02" + "6162" + "09" + "0000000000000102" + "00000001" + "73" + "78797a");
    }

    @Test
    void putBodyIsAViewOfTheFrameNotACopy() {
        ByteBuf frame = Unpooled.buffer();
        Requests.put(frame, 1, 1, AB, 0, 0, S, XYZ);
        ByteBuf in = Frames.skipRequestHeader(frame.skipBytes(4));
        PutCodec put = new PutCodec().wrap(in, 0);
        assertThat(put.body()).isSameAs(in);
        frame.setByte(frame.writerIndex() - 1, 'Z');
        assertThat(ByteBufUtil.getBytes(put.body())).isEqualTo(bytes("xyZ"));
    }

    @Test
    void putRequestWithBadPositionOrQueueSeqIsMalformed() {
        ByteBuf zeroPosition = Unpooled.buffer().writeLong(0);
        assertThatThrownBy(() -> new PutCodec().wrap(zeroPosition, RequestDescriptor.FLAG_POSITIONED))
                .isInstanceOf(MalformedPayloadException.class);
        ByteBuf zeroSeq = Unpooled.buffer().writeLong(0);
        assertThatThrownBy(() -> new SequencedPrefix().wrap(zeroSeq, RequestDescriptor.FLAG_SEQUENCED))
                .isInstanceOf(MalformedPayloadException.class);
        ByteBuf truncated = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("02" + "6162" + "09" + "00"));
        assertThatThrownBy(() -> new PutCodec().wrap(truncated, 0)).isInstanceOf(MalformedPayloadException.class);
    }

    @Test
    void putOk() {
        String hex = "0000001c" + "02" + "03" + "0000" + "0000000000000007" + "0000000000000010" + "0000000000000004";
        assertThat(hex(b -> PutCodec.writeOk(b, 7, 0x10, 4))).isEqualTo(hex);
        assertThat(PutCodec.readOk(responsePayload(hex, Opcode.PUT, Status.OK, 7, 0x10))).isEqualTo(4);
    }

    // ---- DELETE, REPLACE, GET

    @Test
    void deleteRequestAndOk() {
        String hex = "00000013" + "02" + "04" + "0000" + "0000000000000008" + "00000003" + "02" + "6162";
        assertThat(hex(b -> Requests.delete(b, 8, 3, AB))).isEqualTo(hex);
        assertThat(DeleteCodec.readRequest(requestPayload(hex, Opcode.DELETE, 8, 3, 0))).isEqualTo(AB);
        String ok = emptyOk("04", 8, 0x10);
        assertThat(hex(b -> DeleteCodec.writeOk(b, 8, 0x10))).isEqualTo(ok);
        assertThat(responsePayload(ok, Opcode.DELETE, Status.OK, 8, 0x10).isReadable()).isFalse();
    }

    @Test
    void sequencedDeleteIsReadBackWithItsPrefix() {
        String hex = hex(b -> Requests.deleteSequenced(b, 7, 3, 42, AB));
        ByteBuf in = requestPayload(hex, Opcode.DELETE, 7, 3, RequestDescriptor.FLAG_SEQUENCED);
        assertThat(new SequencedPrefix().wrap(in, RequestDescriptor.FLAG_SEQUENCED).queueSeq()).isEqualTo(42);
        assertThat(DeleteCodec.readRequest(in)).isEqualTo(AB);
    }

    @Test
    void replaceRequestAndOk() {
        String hex = "00000021" + "02" + "05" + "0000" + "0000000000000008" + "00000003"
                + "02" + "6162" + "09" + "0000000000000102" + "00000001" + "73";
        assertThat(hex(b -> Requests.replace(b, 8, 3, AB, 9, 0x102, S))).isEqualTo(hex);
        ReplaceCodec r = new ReplaceCodec().wrap(requestPayload(hex, Opcode.REPLACE, 8, 3, 0));
        assertThat(r.id()).isEqualTo(AB);
        assertThat(r.priority()).isEqualTo(9);
        assertThat(r.notBefore()).isEqualTo(0x102);
        assertThat(ByteBufUtil.getBytes(r.state())).isEqualTo(S);
        assertThat(hex(b -> ReplaceCodec.writeOk(b, 8, 0x10))).isEqualTo(emptyOk("05", 8, 0x10));
    }

    @Test
    void getRequestAndOk() {
        String hex = "00000013" + "02" + "06" + "0000" + "0000000000000008" + "00000003" + "02" + "6162";
        assertThat(hex(b -> Requests.get(b, 8, 3, AB))).isEqualTo(hex);
        assertThat(GetCodec.readRequest(requestPayload(hex, Opcode.GET, 8, 3, 0))).isEqualTo(AB);
        String ok = "00000034" + "02" + "06" + "0000" + "0000000000000008" + "0000000000000010" + RECORD;
        assertThat(hex(b -> {
            int start = GetCodec.beginOk(b, 8, 0x10);
            MessageRecord.write(b, 4, AB, 9, 0x102, Unpooled.wrappedBuffer(S), Unpooled.wrappedBuffer(XYZ));
            Frames.finishFrame(b, start);
        })).isEqualTo(ok);
        assertRecord(GetCodec.readOk(responsePayload(ok, Opcode.GET, Status.OK, 8, 0x10)));
    }

    @Test
    void messageRecordHeadAndBodyLengthAreTheWholeRecordAroundStateAndBody() {
        // the journal's way: head, state bytes, body length, body bytes (separate buffers)
        assertThat(hex(b -> {
            MessageRecord.writeHead(b, 4, AB, 9, 0x102, S.length);
            b.writeBytes(S);
            MessageRecord.writeBodyLength(b, XYZ.length);
            b.writeBytes(XYZ);
        })).isEqualTo(RECORD);
        assertThat(MessageRecordDescriptor.length(AB.length, S.length, XYZ.length)).isEqualTo(RECORD.length() / 2);
        assertThat(MessageRecordDescriptor.MIN_LENGTH).isEqualTo(8 + 2 + 1 + 8 + 4 + 4);
    }

    // ---- READ

    @Test
    void readRequestAndOk() {
        String hex = "00000028" + "02" + "07" + "0000" + "0000000000000008" + "00000003"
                + "0000000000000001" + "0000000a" + "00001000" + "0000000000000000";
        assertThat(hex(b -> Requests.read(b, 8, 3, 1, 10, 0x1000, 0))).isEqualTo(hex);
        ReadCodec r = new ReadCodec().wrap(requestPayload(hex, Opcode.READ, 8, 3, 0));
        assertThat(r.fromPosition()).isEqualTo(1);
        assertThat(r.maxCount()).isEqualTo(10);
        assertThat(r.maxBytes()).isEqualTo(0x1000);
        assertThat(r.readyBefore()).isZero();

        String ok = "00000040" + "02" + "07" + "0000" + "0000000000000008" + "0000000000000010"
                + "0000000000000005" + "00000001" + RECORD;
        assertThat(hex(b -> {
            int start = ReadCodec.beginOk(b, 8, 0x10);
            int mark = ReadCodec.beginRecords(b);
            MessageRecord.write(b, 4, AB, 9, 0x102, Unpooled.wrappedBuffer(S), Unpooled.wrappedBuffer(XYZ));
            ReadCodec.endRecords(b, mark, 5, 1);
            Frames.finishFrame(b, start);
        })).isEqualTo(ok);
        ByteBuf p = responsePayload(ok, Opcode.READ, Status.OK, 8, 0x10);
        assertThat(ReadCodec.readOkNextPosition(p)).isEqualTo(5);
        assertThat(ReadCodec.readOkCount(p)).isEqualTo(1);
        assertRecord(MessageRecord.read(p));
        assertThat(p.isReadable()).isFalse();
    }

    @Test
    void readRequestWithoutPositiveLimitsAndACountTheBytesCannotHoldAreMalformed() {
        ByteBuf noCount = Unpooled.buffer().writeLong(1).writeInt(0).writeInt(1).writeLong(0);
        assertThatThrownBy(() -> new ReadCodec().wrap(noCount)).isInstanceOf(MalformedPayloadException.class);
        ByteBuf tooMany = Unpooled.buffer().writeInt(2).writeBytes(ByteBufUtil.decodeHexDump(RECORD));
        assertThatThrownBy(() -> ReadCodec.readOkCount(tooMany)).isInstanceOf(MalformedPayloadException.class);
    }

    // ---- the others

    @Test
    void authRequestAndOk() {
        String hex = "00000016" + "02" + "01" + "0000" + "0000000000000001" + "00000000" + "0001" + "75" + "0001" + "70";
        assertThat(hex(b -> Requests.auth(b, 1, "u", "p"))).isEqualTo(hex);
        AuthCodec a = new AuthCodec().wrap(requestPayload(hex, Opcode.AUTH, 1, 0, 0));
        assertThat(a.user()).isEqualTo("u");
        assertThat(a.password()).isEqualTo("p");
        assertThat(hex(b -> AuthCodec.writeOk(b, 1))).isEqualTo(emptyOk("01", 1, 0));
    }

    @Test
    void openRequestWithTheStoreItExpects() {
        String hex = "00000037" + "02" + "02" + "0000" + "0000000000000001" + "00000000"
                + "0001" + "71" + "01" + "0000000000000002" + "0000000000000000" + "0000000000000000" + "0001" + "6f"
                + "f00000000000000d";
        assertThat(hex(b -> Requests.open(b, 1, "q", OpenMode.WRITE, 2, 0, 0, "o", 0xf00000000000000dL))).isEqualTo(hex);
        OpenCodec o = new OpenCodec().wrap(requestPayload(hex, Opcode.OPEN, 1, 0, 0));
        assertThat(o.owner()).isEqualTo("o");
        assertThat(o.expectedStore()).isEqualTo(0xf00000000000000dL);
        assertThat(hex(b -> Requests.open(b, 1, "q", OpenMode.WRITE, 2, 0, 0, "o", 0)))
                .as("0 (any store) leaves the field out: the request as before it existed")
                .isEqualTo(hex(b -> Requests.open(b, 1, "q", OpenMode.WRITE, 2, 0, 0, "o")));
        assertThat(new OpenCodec().wrap(requestPayload(hex(b -> Requests.open(b, 1, "q", OpenMode.WRITE, 2, 0, 0, "o")),
                Opcode.OPEN, 1, 0, 0)).expectedStore()).as("absent: any store").isZero();

        ByteBuf cut = Unpooled.buffer();
        Wire.writeString(cut, "q");
        cut.writeByte(OpenMode.WRITE.code());
        cut.writeLong(2).writeLong(0).writeLong(0);
        Wire.writeString(cut, "o");
        cut.writeBytes(new byte[3]); // an expected store cut short
        assertThatThrownBy(() -> new OpenCodec().wrap(cut)).isInstanceOf(MalformedPayloadException.class);
    }

    @Test
    void openRequestAndOk() {
        String hex = "0000002f" + "02" + "02" + "0000" + "0000000000000001" + "00000000"
                + "0001" + "71" + "01" + "0000000000000002" + "0000000000000000" + "0000000000000000" + "0001" + "6f";
        assertThat(hex(b -> Requests.open(b, 1, "q", OpenMode.WRITE, 2, 0, 0, "o"))).isEqualTo(hex);
        OpenCodec o = new OpenCodec().wrap(requestPayload(hex, Opcode.OPEN, 1, 0, 0));
        assertThat(o.queue()).isEqualTo("q");
        assertThat(o.mode()).isEqualTo(OpenMode.WRITE);
        assertThat(o.epoch()).isEqualTo(2);
        assertThat(o.maxMessages()).isZero();
        assertThat(o.maxBytes()).isZero();
        assertThat(o.owner()).isEqualTo("o");

        String ok = "00000041" + "02" + "02" + "0000" + "0000000000000001" + "0000000000000010"
                + "00000001" + "0000000000000002" + "0000000000000000" + "01" + "0000000000000005" + "ffffffffffffffff"
                + "0000000000000abc";
        assertThat(hex(b -> OpenCodec.writeOk(b, 1, 0x10, 1, 2, 0, QueueFlags.DAMAGED, 5, -1, 0xabc))).isEqualTo(ok);
        OpenCodec.Answer a = new OpenCodec.Answer().wrap(responsePayload(ok, Opcode.OPEN, Status.OK, 1, 0x10));
        assertThat(a.handle()).isEqualTo(1);
        assertThat(a.epoch()).isEqualTo(2);
        assertThat(a.size()).isZero();
        assertThat(a.queueFlags()).isEqualTo(QueueFlags.DAMAGED);
        assertThat(a.lastSeq()).isEqualTo(5);
        assertThat(a.digest()).isEqualTo(-1);
        assertThat(a.store()).isEqualTo(0xabc);
    }

    /** A server from before the store id ends its OPEN answer at the digest: the store reads as 0, unknown. */
    @Test
    void openOkWithoutStoreReadsZero() {
        String ok = "00000039" + "02" + "02" + "0000" + "0000000000000001" + "0000000000000010"
                + "00000001" + "0000000000000002" + "0000000000000000" + "00" + "0000000000000005" + "0000000000000009";
        OpenCodec.Answer a = new OpenCodec.Answer().wrap(responsePayload(ok, Opcode.OPEN, Status.OK, 1, 0x10));
        assertThat(a.digest()).isEqualTo(9);
        assertThat(a.store()).isZero();
    }

    @Test
    void openRequestWithUnknownModeIsMalformed() {
        ByteBuf in = Unpooled.buffer();
        Wire.writeString(in, "q");
        in.writeByte(7).writeLong(0).writeLong(0).writeLong(0);
        Wire.writeString(in, "");
        assertThatThrownBy(() -> new OpenCodec().wrap(in)).isInstanceOf(MalformedPayloadException.class);
    }

    @Test
    void statRequestAndOk() {
        String hex = "00000010" + "02" + "08" + "0000" + "0000000000000001" + "00000003";
        assertThat(hex(b -> StatCodec.writeRequest(b, 1, 3))).isEqualTo(hex);
        requestPayload(hex, Opcode.STAT, 1, 3, 0);
        String ok = "00000060" + "02" + "08" + "0000" + "0000000000000001" + "0000000000000010"
                + "0000000000000001" + "0000000000000003" + "0000000000000004" + "0000000000000005"
                + "7fffffffffffffff" + "0000000000000002" + "0001" + "6f" + "00" + "0000000000000006"
                + "0000000000000007" + "0000000000000008";
        assertThat(hex(b -> StatCodec.writeOk(b, 1, 0x10, 1, 3, 4, 5, Long.MAX_VALUE, 2, "o", 0, 6, 7, 8))).isEqualTo(ok);
        StatCodec.Answer a = new StatCodec.Answer().wrap(responsePayload(ok, Opcode.STAT, Status.OK, 1, 0x10));
        assertThat(new long[]{a.size(), a.bytes(), a.firstPosition(), a.nextPosition(), a.earliestNotBefore(),
                a.epoch(), a.queueFlags(), a.lastSeq(), a.digest(), a.store()})
                .containsExactly(1, 3, 4, 5, Long.MAX_VALUE, 2, 0, 6, 7, 8);
        assertThat(a.owner()).isEqualTo("o");
    }

    @Test
    void listRequestAndOk() {
        String hex = "00000010" + "02" + "09" + "0000" + "0000000000000001" + "00000000";
        assertThat(hex(b -> ListCodec.writeRequest(b, 1))).isEqualTo(hex);
        assertThat(hex(b -> Requests.empty(b, Opcode.LIST, 1, 0))).isEqualTo(hex);
        String ok = "0000002b" + "02" + "09" + "0000" + "0000000000000001" + "0000000000000000"
                + "00000001" + "0001" + "71" + "0000000000000002" + "0000000000000003";
        assertThat(hex(b -> {
            int start = ListCodec.beginOk(b, 1, 1);
            ListCodec.writeRow(b, "q", 2, 3);
            Frames.finishFrame(b, start);
        })).isEqualTo(ok);
        ByteBuf p = responsePayload(ok, Opcode.LIST, Status.OK, 1, 0);
        assertThat(ListCodec.readOkCount(p)).isEqualTo(1);
        ListCodec.Row row = new ListCodec.Row().wrap(p);
        assertThat(row.name()).isEqualTo("q");
        assertThat(row.size()).isEqualTo(2);
        assertThat(row.txn()).isEqualTo(3);
    }

    @Test
    void pingRequestAndOk() {
        String hex = "00000010" + "02" + "0c" + "0000" + "0000000000000001" + "00000000";
        assertThat(hex(b -> PingCodec.writeRequest(b, 1))).isEqualTo(hex);
        String ok = "0000001c" + "02" + "0c" + "0000" + "0000000000000001" + "0000000000000000" + "0000000000001234";
        assertThat(hex(b -> PingCodec.writeOk(b, 1, 0x1234))).isEqualTo(ok);
        assertThat(PingCodec.readOk(responsePayload(ok, Opcode.PING, Status.OK, 1, 0))).isEqualTo(0x1234);
    }

    @Test
    void clearDropCloseRequestsAndOks() {
        assertThat(hex(b -> Requests.empty(b, Opcode.CLEAR, 1, 3))).isEqualTo(
                "00000010" + "02" + "0a" + "0000" + "0000000000000001" + "00000003");
        assertThat(hex(b -> Requests.empty(b, Opcode.DROP, 1, 3))).isEqualTo(
                "00000010" + "02" + "0b" + "0000" + "0000000000000001" + "00000003");
        assertThat(hex(b -> Requests.empty(b, Opcode.CLOSE, 1, 3))).isEqualTo(
                "00000010" + "02" + "0d" + "0000" + "0000000000000001" + "00000003");
        assertThat(hex(b -> Frames.writeEmptyOk(b, Opcode.CLEAR.code(), 1, 0x10))).isEqualTo(emptyOk("0a", 1, 0x10));
        assertThat(hex(b -> Frames.writeEmptyOk(b, Opcode.DROP.code(), 1, 0x10))).isEqualTo(emptyOk("0b", 1, 0x10));
        assertThat(hex(b -> Frames.writeEmptyOk(b, Opcode.CLOSE.code(), 1, 0x10))).isEqualTo(emptyOk("0d", 1, 0x10));
    }

    @Test
    void rebaseRequestWithAndWithoutNextPositionAndOk() {
        String with = "00000028" + "02" + "0e" + "0000" + "0000000000000001" + "00000002"
                + "0000000000000006" + "0000000000000007" + "0000000000000008";
        assertThat(hex(b -> Requests.rebase(b, 1, 2, 6, 7, 8))).isEqualTo(with);
        RebaseCodec r = new RebaseCodec().wrap(requestPayload(with, Opcode.REBASE, 1, 2, 0));
        assertThat(new long[]{r.lastSeq(), r.digest(), r.nextPosition()}).containsExactly(6, 7, 8);
        String without = "00000020" + "02" + "0e" + "0000" + "0000000000000001" + "00000002"
                + "0000000000000006" + "0000000000000007";
        assertThat(hex(b -> Requests.rebase(b, 1, 2, 6, 7))).isEqualTo(without);
        r.wrap(requestPayload(without, Opcode.REBASE, 1, 2, 0));
        assertThat(new long[]{r.lastSeq(), r.digest(), r.nextPosition()}).containsExactly(6, 7, 0);
        assertThat(hex(b -> Frames.writeEmptyOk(b, Opcode.REBASE.code(), 1, 0x10))).isEqualTo(emptyOk("0e", 1, 0x10));
    }

    // ---- errors

    @Test
    void errorResponse() {
        String hex = "00000018" + "02" + "04" + "0005" + "0000000000000008" + "0000000000000010" + "0002" + "6e6f";
        assertThat(hex(b -> ErrorResponse.write(b, Opcode.DELETE.code(), Status.BAD_HANDLE, 8, 0x10, "no")))
                .isEqualTo(hex);
        assertThat(hex(b -> Frames.writeError(b, Opcode.DELETE.code(), Status.BAD_HANDLE, 8, 0x10, "no")))
                .isEqualTo(hex);
        ByteBuf p = responsePayload(hex, Opcode.DELETE, Status.BAD_HANDLE, 8, 0x10);
        assertThat(ErrorResponse.readReason(p, Status.BAD_HANDLE)).isEqualTo("no");
        assertThat(ErrorResponse.readSeqGapLastSeq(Status.BAD_HANDLE, p)).isZero();
    }

    @Test
    void errorResponseWithoutReasonGetsTheStatusDescription() {
        ByteBuf out = Unpooled.buffer();
        ErrorResponse.write(out, Opcode.DELETE.code(), Status.NOT_FOUND, 8, 0, null);
        ByteBuf p = Frames.skipResponseHeader(out.skipBytes(4));
        assertThat(ErrorResponse.readReason(p, Status.NOT_FOUND)).isEqualTo(Status.NOT_FOUND.description());
        assertThat(ErrorResponse.readReason(Unpooled.EMPTY_BUFFER, Status.NOT_FOUND))
                .isEqualTo(Status.NOT_FOUND.description());
    }

    @Test
    void seqGapResponseCarriesTheLastSeqAfterTheReason() {
        String hex = "00000021" + "02" + "03" + "0016" + "0000000000000008" + "0000000000000010"
                + "0003" + "676170" + "0000000000000009";
        assertThat(hex(b -> ErrorResponse.writeSeqGap(b, Opcode.PUT.code(), 8, 0x10, "gap", 9))).isEqualTo(hex);
        ByteBuf p = responsePayload(hex, Opcode.PUT, Status.SEQ_GAP, 8, 0x10);
        assertThat(ErrorResponse.readReason(p, Status.SEQ_GAP)).isEqualTo("gap");
        assertThat(ErrorResponse.readSeqGapLastSeq(Status.SEQ_GAP, p)).isEqualTo(9);
    }
}
