package org.jameskvs.bench;

import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Store-acknowledgement latency at a fixed offered rate (open loop) on one connection: transaction
 * {@code i} is due at {@code start + i/rate}; it is sent as soon as the sender sees it due (all due
 * ones in one pass, then one flush) and its latency is measured from when it was DUE to when its store
 * was acknowledged. So a stall, on the server or in the sender, is charged to every request it
 * delayed (coordinated omission corrected). Each store is followed on the wire by the delete of the
 * same id (not timed), as a relayed mail would be.
 *
 * <p>Only stores acknowledged OK are latency samples; every other answer (a non-OK status, an error
 * reply, a timeout) is counted as a failure by kind. The achieved rate is the OK acks that arrived
 * inside the window (the span the offered transactions were due in) divided by its length.
 *
 * <p>Bounded: exactly {@code rate x seconds} transactions are offered; sending stops at the window's
 * end plus {@code max(2 s, window)} (what was not sent by then is reported as not sent) and the run
 * waits at most {@value #DRAIN_SECONDS} s for the last answers (the missing ones are reported).
 */
public final class LatencyAtRate {
    private static final long DRAIN_SECONDS = 30;
    private static final long SLOW_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /**
     * One measured rate.
     *
     * @param sent          transactions sent (offered minus those the sender could not send in time)
     * @param okInWindow    stores acknowledged OK inside the window
     * @param okLate        stores acknowledged OK after the window (latency samples, not rate)
     * @param storeFailures stores answered with anything but OK, or not answered
     * @param failures      failure kind -> count and an example (stores and deletes)
     * @param sendLag       how late the sender itself sent each transaction after its intended time
     *                      (part of the latency that is the client's own scheduling, not the target's)
     * @param slowEpisodes  when the acks slower than 2 ms came (worst episodes first)
     */
    public record Result(int offeredRate, long offered, long sent, double windowSeconds, long okInWindow, long okLate,
                         long storeFailures, long deleteFailures, Map<String, String> failures, Histogram latency,
                         Histogram sendLag, int slowAcks, List<String> slowEpisodes) {
        public double achievedRate() {
            return okInWindow / windowSeconds;
        }

        /** Not-OK stores plus transactions never sent. */
        public long errors() {
            return storeFailures + (offered - sent);
        }

        public double percentileMillis(double percentile) {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(percentile) / 1e6;
        }

        public double maxMillis() {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getMaxValue() / 1e6;
        }
    }

    private LatencyAtRate() {
    }

    /**
     * Offers {@code rate x seconds} store+delete transactions to a started target.
     *
     * @param idPrefix distinct per call: a replicated queue never takes an id twice, even after its delete
     */
    public static Result run(StoreDeleteTarget target, byte[] body, String idPrefix, int rate, int seconds) {
        if (rate <= 0 || seconds <= 0) {
            throw new IllegalArgumentException("rate and seconds must be positive: " + rate + ", " + seconds);
        }
        long offered = (long) rate * seconds;
        double intervalNanos = 1e9 / rate;
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
        long windowEnd = start + TimeUnit.SECONDS.toNanos(seconds);
        long sendDeadline = windowEnd + TimeUnit.SECONDS.toNanos(Math.max(2, seconds));
        SlowRequests slow = new SlowRequests(SLOW_NANOS, 100_000);
        AckTally tally = new AckTally(windowEnd, slow);
        Histogram sendLag = new Histogram(3);
        long sent = 0;
        while (sent < offered) {
            long now = System.nanoTime();
            if (now > sendDeadline) {
                break;
            }
            long due = Math.min(offered, now < start ? 0 : (long) ((now - start) / intervalNanos) + 1);
            if (due <= sent) {
                long next = start + (long) (sent * intervalNanos);
                LockSupport.parkNanos(Math.min(50_000, Math.max(1_000, next - now)));
                continue;
            }
            for (; sent < due; sent++) {
                long intended = start + (long) (sent * intervalNanos);
                sendLag.recordValue(Math.max(0, now - intended));
                byte[] id = (idPrefix + sent).getBytes(StandardCharsets.US_ASCII);
                target.store(id, body).thenAccept(f -> tally.store(intended, f));
                target.delete(id).thenAccept(tally::delete);
            }
            target.flush();
        }
        target.flush();
        long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        while (tally.answered() < 2 * sent && System.nanoTime() < drainDeadline) {
            LockSupport.parkNanos(1_000_000);
        }
        long unanswered = Math.max(0, 2 * sent - tally.answered());
        Map<String, String> failures = tally.failureSummary();
        if (unanswered > 0) {
            failures.put("unanswered", unanswered + " stores/deletes after " + DRAIN_SECONDS + " s");
        }
        if (sent < offered) {
            failures.put("not sent", (offered - sent) + " transactions: the sender fell behind the window by over "
                    + Duration.ofNanos(sendDeadline - windowEnd).toSeconds() + " s");
        }
        // An unanswered store counts as a failed one (a store's answer comes before its delete's).
        long storesUnanswered = Math.max(0, sent - tally.okInWindow() - tally.okLate() - tally.storeFailures());
        return new Result(rate, offered, sent, seconds, tally.okInWindow(), tally.okLate(),
                tally.storeFailures() + storesUnanswered, tally.deleteFailures(), failures, tally.latencies(), sendLag,
                slow.count(), slow.episodes(5));
    }
}
