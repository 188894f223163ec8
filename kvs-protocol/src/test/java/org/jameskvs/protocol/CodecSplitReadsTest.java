package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The codecs behind the frame decoder, as the server and client run them: a stream of every
 * operation's request (and of answers) goes through {@link FrameDecoder} on an {@link EmbeddedChannel},
 * cut into two reads at every byte, and each frame is read back by its codec.
 */
class CodecSplitReadsTest {
    private static final byte[] ID = "id-1".getBytes(StandardCharsets.UTF_8);
    private static final byte[] STATE = {1, 2};
    private static final byte[] BODY = "hello".getBytes(StandardCharsets.UTF_8);

    private static ByteBuf everyRequest() {
        ByteBuf out = Unpooled.buffer();
        Requests.auth(out, 1, "u", "p");
        Requests.open(out, 2, "q", OpenMode.WRITE, 3, 0, 0, "o");
        Requests.putSequenced(out, 3, 1, RequestDescriptor.FLAG_REPLACE_EXISTING, 7, ID, 5, 9, STATE, BODY);
        Requests.putAt(out, 4, 1, 0, 11, ID, 5, 9, STATE, BODY);
        Requests.deleteSequenced(out, 5, 1, 8, ID);
        Requests.replace(out, 6, 1, ID, 4, 10, STATE);
        Requests.get(out, 7, 1, ID);
        Requests.read(out, 8, 1, 1, 10, 1000, 0);
        Requests.rebase(out, 9, 1, 8, 99, 12);
        Requests.clearSequenced(out, 10, 1, 9);
        return out;
    }

    /** Reads back the frames {@link #everyRequest} wrote, each with its codec; returns a line per frame. */
    private static List<String> readRequests(List<ByteBuf> frames) {
        SequencedPrefix prefix = new SequencedPrefix();
        PutCodec put = new PutCodec();
        ReplaceCodec replace = new ReplaceCodec();
        ReadCodec read = new ReadCodec();
        RebaseCodec rebase = new RebaseCodec();
        OpenCodec open = new OpenCodec();
        AuthCodec auth = new AuthCodec();
        List<String> lines = new ArrayList<>();
        for (ByteBuf frame : frames) {
            Opcode op = Opcode.fromCode(Frames.requestOpcode(frame));
            int flags = Frames.requestFlags(frame);
            long seq = Frames.requestSequence(frame);
            ByteBuf in = Frames.skipRequestHeader(frame);
            String q = (flags & RequestDescriptor.FLAG_SEQUENCED) != 0 && SequencedPrefix.isSequenceable(op)
                    ? " qseq=" + prefix.wrap(in, flags).queueSeq() : "";
            String line = seq + " " + op + q + " " + switch (op) {
                case AUTH -> auth.wrap(in).user() + "/" + auth.password();
                case OPEN -> open.wrap(in).queue() + " " + open.mode() + " " + open.epoch() + " " + open.owner();
                case PUT -> {
                    put.wrap(in, flags);
                    yield put.position() + " " + new String(put.id(), StandardCharsets.UTF_8) + " " + put.priority()
                            + " " + put.notBefore() + " " + ByteBufUtil.hexDump(put.state()) + " "
                            + put.body().toString(StandardCharsets.UTF_8) + " " + put.replaceExisting();
                }
                case DELETE -> new String(DeleteCodec.readRequest(in), StandardCharsets.UTF_8);
                case REPLACE -> {
                    replace.wrap(in);
                    yield new String(replace.id(), StandardCharsets.UTF_8) + " " + replace.priority() + " "
                            + replace.notBefore() + " " + ByteBufUtil.hexDump(replace.state());
                }
                case GET -> new String(GetCodec.readRequest(in), StandardCharsets.UTF_8);
                case READ -> {
                    read.wrap(in);
                    yield read.fromPosition() + " " + read.maxCount() + " " + read.maxBytes() + " " + read.readyBefore();
                }
                case REBASE -> {
                    rebase.wrap(in);
                    yield rebase.lastSeq() + " " + rebase.digest() + " " + rebase.nextPosition();
                }
                default -> "";
            };
            lines.add(line.strip());
            frame.release();
        }
        return lines;
    }

    private static final List<String> EXPECTED = List.of(
            "1 AUTH u/p",
            "2 OPEN q WRITE 3 o",
            "3 PUT qseq=7 0 id-1 5 9 0102 hello true",
            "4 PUT 11 id-1 5 9 0102 hello false",
            "5 DELETE qseq=8 id-1",
            "6 REPLACE id-1 4 10 0102",
            "7 GET id-1",
            "8 READ 1 10 1000 0",
            "9 REBASE 8 99 12",
            "10 CLEAR qseq=9");

    private static List<ByteBuf> decode(EmbeddedChannel ch, ByteBuf all, int cut) {
        ch.writeInbound(all.retainedSlice(0, cut));
        ch.writeInbound(all.retainedSlice(cut, all.readableBytes() - cut));
        List<ByteBuf> frames = new ArrayList<>();
        ByteBuf f;
        while ((f = ch.readInbound()) != null) {
            frames.add(f);
        }
        return frames;
    }

    @Test
    void everyRequestReadsBackThroughTheFrameDecoderWhereverTheReadIsCut() {
        ByteBuf all = everyRequest();
        for (int cut = 1; cut < all.readableBytes(); cut++) {
            EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1 << 20));
            assertThat(readRequests(decode(ch, all, cut))).as("cut at %d", cut).isEqualTo(EXPECTED);
            assertThat(ch.finish()).isFalse();
        }
        all.release();
    }

    @Test
    void answersReadBackThroughTheFrameDecoderWhereverTheReadIsCut() {
        ByteBuf all = Unpooled.buffer();
        PutCodec.writeOk(all, 1, 5, 42);
        int start = ReadCodec.beginOk(all, 2, 5);
        int mark = ReadCodec.beginRecords(all);
        MessageRecord.write(all, 42, ID, 5, 9, Unpooled.wrappedBuffer(STATE), Unpooled.wrappedBuffer(BODY));
        ReadCodec.endRecords(all, mark, 43, 1);
        Frames.finishFrame(all, start);
        ErrorResponse.writeSeqGap(all, Opcode.DELETE.code(), 3, 5, "gap", 7);
        ErrorResponse.write(all, Opcode.GET.code(), Status.NOT_FOUND, 4, 5, "none");
        for (int cut = 1; cut < all.readableBytes(); cut++) {
            EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forResponses(1 << 20));
            List<ByteBuf> frames = decode(ch, all, cut);
            assertThat(frames).hasSize(4);
            ByteBuf put = Frames.skipResponseHeader(frames.get(0));
            assertThat(PutCodec.readOk(put)).isEqualTo(42);
            ByteBuf read = Frames.skipResponseHeader(frames.get(1));
            assertThat(ReadCodec.readOkNextPosition(read)).isEqualTo(43);
            assertThat(ReadCodec.readOkCount(read)).isEqualTo(1);
            assertThat(MessageRecord.read(read)).isEqualTo(new StoredMessage(42, ID, 5, 9, STATE, BODY));
            assertThat(Frames.responseStatus(frames.get(2))).isEqualTo(Status.SEQ_GAP);
            ByteBuf gap = Frames.skipResponseHeader(frames.get(2));
            assertThat(ErrorResponse.readReason(gap, Status.SEQ_GAP)).isEqualTo("gap");
            assertThat(ErrorResponse.readSeqGapLastSeq(Status.SEQ_GAP, gap)).isEqualTo(7);
            assertThat(Frames.responseStatus(frames.get(3))).isEqualTo(Status.NOT_FOUND);
            assertThat(ErrorResponse.readReason(Frames.skipResponseHeader(frames.get(3)), Status.NOT_FOUND))
                    .isEqualTo("none");
            frames.forEach(ByteBuf::release);
            assertThat(ch.finish()).isFalse();
        }
        all.release();
    }
}
