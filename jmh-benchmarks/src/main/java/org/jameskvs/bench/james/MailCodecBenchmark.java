package org.jameskvs.bench.james;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.apache.james.lifecycle.api.LifecycleUtil;
import org.apache.mailet.Mail;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Encode and decode throughput of the plug-in's binary mail serializer
 * ({@link org.jameskvs.james.codec.MailCodec}, the body of every KVS message) against James 3.8.1's
 * own ways of turning a mail into bytes for a queue or a store, in the same run.
 *
 * <h2>What is measured</h2>
 * One single-threaded operation on one whole mail: envelope (sender, recipients, state, remote
 * address/host, last-updated, one per-recipient header), six JSON-serializable attributes
 * ({@link BenchMails#ATTRIBUTES}) and the MIME bytes.
 * <ul>
 * <li>{@code encode}: a {@code Mail} (an unmodified {@code MimeMessageWrapper} over the MIME bytes, as
 *   the spool holds it) to one {@code byte[]}.</li>
 * <li>{@code decode}: that {@code byte[]} back to a {@code Mail} ready for the mailet pipeline (the MIME
 *   part is wrapped, not parsed, by every codec, as in production).</li>
 * </ul>
 * Primary score: operations/s. Secondary score {@code bytes}: the codec's serialized bytes produced
 * (encode) or consumed (decode) per second; divide by 10^6 for MB/s ({@code encodedSize} in the setup
 * log gives each codec's form size).
 *
 * <h2>Parameters</h2>
 * <ul>
 * <li>{@code mail}: {@code 1KB} and {@code 10KB} text mails (whole MIME size), {@code 1MB-attachment}
 *   (multipart, 1 MiB binary attachment, ~1.4 MB of base64 MIME), {@code 1000-recipients} (1 KB MIME,
 *   1,000 envelope recipients).</li>
 * <li>{@code codec}: {@code kvs} (the plug-in); {@code james-activemq} (baseline: James 3.8.1's
 *   ActiveMQ queue wire form, JMS properties + Java-serialized body in OpenWire, see
 *   {@link ActiveMqMailCodec}); {@code james-java-serialization} (baseline: FileMailRepository's
 *   {@code MailImpl} Java serialization + {@code writeTo}). James's memory queue has no serialized
 *   form (it keeps a {@code MailImpl.duplicate}); it is the ceiling of {@link MailQueueBenchmark}.</li>
 * </ul>
 * What dominates, from a stack profile: every codec encodes the MIME part with James's
 * {@code MimeMessageWrapper.writeTo}, which re-parses the headers of an unmodified message on each
 * call (3.8.1), so small-mail encode rates are bounded by James, not by the codec. On decode both
 * baselines end in {@code MailImpl.setMessage}, which in 3.8.1 copies the message (in memory up to
 * 100 KB, to a temporary file above); the plug-in's {@code setMessageContent} wraps its buffer
 * without a copy. Decoded mails are disposed in the measured call, as James's spooler does.
 *
 * <p>Setup checks each codec's round trip (name, sender, recipients, attributes, per-recipient headers,
 * MIME bytes identical); every invocation checks its own output size or decoded name and recipient
 * count, so a broken codec fails the run instead of measuring nothing.
 *
 * <h2>Run</h2>
 * <pre>
 * java -cp jmh-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main 'bench.james.MailCodecBenchmark' -wi 1 -w 5 -i 3 -r 2 -f 1
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class MailCodecBenchmark {

    @Param({BenchMails.ONE_KB, BenchMails.TEN_KB, BenchMails.ATTACHMENT_1MB, BenchMails.RECIPIENTS_1000})
    public String mail;

    @Param({"kvs", "james-activemq", "james-java-serialization"})
    public String codec;

    private MailWireCodec wireCodec;
    private Mail source;
    private String name;
    private int recipientCount;
    private byte[] encoded;
    private int encodedLength;

    /** Serialized bytes per second, reported next to the operations. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        wireCodec = MailWireCodec.forName(codec);
        name = "bench-" + mail;
        source = BenchMails.mail(name, mail);
        recipientCount = source.getRecipients().size();
        encoded = wireCodec.encode(source);
        encodedLength = encoded.length;
        Mail decoded = wireCodec.decode(encoded);
        checkRoundTrip(decoded);
        LifecycleUtil.dispose(decoded);
        System.out.printf("%n[setup] codec=%s mail=%s mime=%d bytes, encodedSize=%d bytes%n", codec, mail,
            BenchMails.mime(mail).length, encodedLength);
    }

    private void checkRoundTrip(Mail decoded) throws Exception {
        check(decoded.getName().equals(source.getName()), "name");
        check(decoded.getMaybeSender().equals(source.getMaybeSender()), "sender");
        check(decoded.getRecipients().equals(source.getRecipients()), "recipients");
        check(decoded.getState().equals(source.getState()), "state");
        check(decoded.getRemoteAddr().equals(source.getRemoteAddr()), "remoteAddr");
        check(decoded.getPerRecipientSpecificHeaders().equals(source.getPerRecipientSpecificHeaders()), "per-recipient headers");
        for (var attribute : BenchMails.ATTRIBUTES) {
            check(decoded.getAttribute(attribute.getName()).map(a -> a.getValue().equals(attribute.getValue())).orElse(false),
                "attribute " + attribute.getName().asString());
        }
        ByteArrayOutputStream mime = new ByteArrayOutputStream();
        decoded.getMessage().writeTo(mime);
        check(Arrays.equals(mime.toByteArray(), BenchMails.mime(mail)), "MIME bytes");
    }

    private void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(codec + " round trip of " + mail + " lost " + what);
        }
    }

    @Benchmark
    public byte[] encode(Bytes counter) throws Exception {
        byte[] bytes = wireCodec.encode(source);
        // The same mail encodes to the same size (give or take OpenWire's variable-width message id and timestamp).
        if (Math.abs(bytes.length - encodedLength) > 32) {
            throw new IllegalStateException(codec + ": encoded " + bytes.length + " bytes, expected " + encodedLength);
        }
        counter.bytes += bytes.length;
        return bytes;
    }

    @Benchmark
    public String decode(Bytes counter) throws Exception {
        Mail decoded = wireCodec.decode(encoded);
        String decodedName = decoded.getName();
        if (!name.equals(decodedName) || decoded.getRecipients().size() != recipientCount) {
            throw new IllegalStateException(codec + ": decoded " + decodedName + " with "
                + decoded.getRecipients().size() + " recipients");
        }
        // Released as James's spooler releases a mail once processed (frees any copy the decoder made).
        LifecycleUtil.dispose(decoded);
        counter.bytes += encodedLength;
        return decodedName;
    }
}
