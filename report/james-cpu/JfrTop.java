import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Shares of JFR execution samples (jdk.ExecutionSample: threads running Java code) of one James
 * recording, within a time window (the benchmark's max-throughput phase): the top frames (self), and
 * the share of samples whose stack holds a frame of a given kind (inclusive), for ours vs James's.
 *
 * <p>Usage: {@code java report/james-cpu/JfrTop.java <file.jfr> [<from HH:mm:ss UTC> <seconds>] [top]}
 */
public class JfrTop {
    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        Instant from = Instant.MIN;
        Instant to = Instant.MAX;
        if (args.length >= 3) {
            from = LocalDate.now(ZoneOffset.UTC).atTime(LocalTime.parse(args[1])).toInstant(ZoneOffset.UTC);
            to = from.plusSeconds(Long.parseLong(args[2]));
        }
        int top = args.length >= 4 ? Integer.parseInt(args[3]) : 25;
        String under = args.length >= 5 ? args[4] : null; // a method: also the frames called under it

        Map<String, Predicate<RecordedEvent>> kinds = new LinkedHashMap<>();
        kinds.put("any org.jameskvs.* frame (our plug-in and KVS client)", e -> anyFrame(e, "org.jameskvs."));
        kinds.put("  org.jameskvs.james.queue.StoreWrites", e -> anyFrame(e, "org.jameskvs.james.queue.StoreWrites"));
        kinds.put("  reactor.* frame with an org.jameskvs.* frame (either calling the other)",
            e -> anyFrame(e, "reactor.") && anyFrame(e, "org.jameskvs."));
        kinds.put("  reactor.* called from org.jameskvs.* code", JfrTop::reactorCalledByOurs);
        kinds.put("  PriorityLevels.open (the KVS queue of a write)", e -> anyMethod(e, "org.jameskvs.james.queue.PriorityLevels.open"));
        kinds.put("  MailCodec.encode (a mail to bytes)", e -> anyMethod(e, "org.jameskvs.james.codec.MailCodec.encode"));
        kinds.put("  threads kvs-* (replicated client's hand-off, queue readers)", e -> thread(e).startsWith("kvs-"));
        kinds.put("javax.mail.Session.getTransport", e -> anyMethod(e, "javax.mail.Session.getTransport"));
        kinds.put("javax.mail.Session.<init> (reads the providers)", e -> anyMethod(e, "javax.mail.Session.<init>"));
        kinds.put("any reactor.* frame", e -> anyFrame(e, "reactor."));
        kinds.put("any io.netty.* frame", e -> anyFrame(e, "io.netty."));
        kinds.put("James SMTP (org.apache.james.protocols.smtp / smtpserver)",
            e -> anyFrame(e, "org.apache.james.protocols.smtp.") || anyFrame(e, "org.apache.james.smtpserver."));
        kinds.put("James mailet container (org.apache.james.mailetcontainer)", e -> anyFrame(e, "org.apache.james.mailetcontainer."));
        kinds.put("RemoteDelivery (org.apache.james.transport.mailets.remote)", e -> anyFrame(e, "org.apache.james.transport.mailets.remote"));
        kinds.put("MimeMessage writeTo/parse (javax.mail.internet)", e -> anyFrame(e, "javax.mail.internet."));

        Map<String, Long> self = new HashMap<>();
        Map<String, Long> firstOurs = new HashMap<>();
        Map<String, Long> threads = new HashMap<>();
        Map<String, Long> calledUnder = new HashMap<>();
        Map<String, Long> selfUnder = new HashMap<>();
        Map<String, Long> inclusive = new LinkedHashMap<>();
        kinds.keySet().forEach(k -> inclusive.put(k, 0L));
        long total = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
                continue;
            }
            Instant t = e.getStartTime();
            if (t.isBefore(from) || !t.isBefore(to) || e.getStackTrace() == null || e.getStackTrace().getFrames().isEmpty()) {
                continue;
            }
            total++;
            self.merge(name(e.getStackTrace().getFrames().get(0)), 1L, Long::sum);
            threads.merge(thread(e).replaceAll("[0-9]+", "N"), 1L, Long::sum);
            if (under != null) {
                List<RecordedFrame> frames = e.getStackTrace().getFrames();
                for (int i = 0; i < frames.size(); i++) {
                    if (name(frames.get(i)).equals(under)) {
                        calledUnder.merge(i == 0 ? "(self)" : name(frames.get(i - 1)), 1L, Long::sum);
                        selfUnder.merge(name(frames.get(0)), 1L, Long::sum);
                        break;
                    }
                }
            }
            for (RecordedFrame f : e.getStackTrace().getFrames()) {
                if (name(f).startsWith("org.jameskvs.")) {
                    firstOurs.merge(name(f), 1L, Long::sum);
                    break;
                }
            }
            for (var kind : kinds.entrySet()) {
                if (kind.getValue().test(e)) {
                    inclusive.merge(kind.getKey(), 1L, Long::sum);
                }
            }
        }
        System.out.printf(Locale.ROOT, "%s: %d execution samples in the window%n%n", file.getFileName(), total);
        System.out.println("| Stack holds (inclusive) | Share of samples |\n|---|---:|");
        for (var entry : inclusive.entrySet()) {
            System.out.printf(Locale.ROOT, "| %s | %.1f %% |%n", entry.getKey(), 100.0 * entry.getValue() / total);
        }
        System.out.println("\n| Top frame (self) | Share of samples |\n|---|---:|");
        print(self, total, top);
        System.out.println("\n| Innermost org.jameskvs.* frame (inclusive below it) | Share of samples |\n|---|---:|");
        print(firstOurs, total, 15);
        System.out.println("\n| Thread (digits as N) | Share of samples |\n|---|---:|");
        print(threads, total, 12);
        if (under != null) {
            System.out.println("\n| Called directly by `" + under + "` | Share of samples |\n|---|---:|");
            print(calledUnder, total, 15);
            System.out.println("\n| Top frame (self) under `" + under + "` | Share of samples |\n|---|---:|");
            print(selfUnder, total, 15);
        }
    }

    private static void print(Map<String, Long> counts, long total, int top) {
        List<Map.Entry<String, Long>> sorted = new ArrayList<>(counts.entrySet());
        sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        for (var entry : sorted.subList(0, Math.min(top, sorted.size()))) {
            System.out.printf(Locale.ROOT, "| `%s` | %.1f %% |%n", entry.getKey(), 100.0 * entry.getValue() / total);
        }
    }

    private static String name(RecordedFrame f) {
        return f.getMethod().getType().getName() + "." + f.getMethod().getName();
    }

    private static String thread(RecordedEvent e) {
        var t = e.getThread("sampledThread");
        return t == null || t.getJavaName() == null ? "" : t.getJavaName();
    }

    private static boolean anyFrame(RecordedEvent e, String prefix) {
        RecordedStackTrace s = e.getStackTrace();
        for (RecordedFrame f : s.getFrames()) {
            if (f.getMethod().getType().getName().startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** A reactor frame nearer the top of the stack than some org.jameskvs frame: Reactor work our code asked for. */
    private static boolean reactorCalledByOurs(RecordedEvent e) {
        boolean reactorAbove = false;
        for (RecordedFrame f : e.getStackTrace().getFrames()) {
            String type = f.getMethod().getType().getName();
            if (type.startsWith("reactor.")) {
                reactorAbove = true;
            } else if (type.startsWith("org.jameskvs.") && reactorAbove) {
                return true;
            }
        }
        return false;
    }

    private static boolean anyMethod(RecordedEvent e, String method) {
        for (RecordedFrame f : e.getStackTrace().getFrames()) {
            if (name(f).equals(method)) {
                return true;
            }
        }
        return false;
    }
}
