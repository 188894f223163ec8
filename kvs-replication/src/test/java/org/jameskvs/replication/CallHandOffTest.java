package org.jameskvs.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.LogCapture;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.netty.channel.DefaultEventLoop;

/**
 * Calls reach their callers in the core's order, on the callback thread, with exactly one outcome; a call
 * without one gets TIMEOUT (outcome unknown) after the real opener's backstop, 6 request timeouts,
 * logged (WARN) and counted (README: "a call gets no outcome").
 */
class CallHandOffTest {
    private final DefaultEventLoop core = new DefaultEventLoop();
    private final ExecutorService callbacks = Executors.newSingleThreadExecutor(r -> new Thread(r, "callbacks-test"));
    private final CallHandOff calls = new CallHandOff(core, null, callbacks, TimeUnit.SECONDS.toNanos(10));

    @AfterEach
    void stop() {
        core.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        callbacks.shutdownNow();
    }

    @Test
    void outcomesArriveInCoreOrderOnTheCallbackThread() throws Exception {
        // Hold the core until every continuation is registered (a continuation registered after its
        // future completed would run on the registering thread: that says nothing about us).
        java.util.concurrent.CountDownLatch registered = new java.util.concurrent.CountDownLatch(1);
        core.execute(() -> {
            try {
                registered.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Integer>> outs = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            int n = i;
            outs.add(calls.submit(c -> CompletableFuture.completedFuture(n), why -> -1)
                    .whenComplete((v, t) -> seen.add(Thread.currentThread().getName() + ":" + v)));
        }
        registered.countDown();
        CompletableFuture.allOf(outs.toArray(new CompletableFuture[0])).join();
        for (int i = 0; i < outs.size(); i++) {
            assertThat(outs.get(i).join()).isEqualTo(i);
            assertThat(seen.get(i)).isEqualTo("callbacks-test:" + i);
        }
    }

    @Test
    void aCallWithoutOutcomeGetsTheUnknownOneOnceItsBackstopPassed() throws Exception {
        CompletableFuture<String> never = new CompletableFuture<>();
        CompletableFuture<String> out = calls.submit(c -> never, why -> "unknown: " + why);
        CompletableFuture<String> answered = calls.submit(c -> CompletableFuture.completedFuture("ok"), why -> "unknown");
        assertThat(answered.get(5, TimeUnit.SECONDS)).isEqualTo("ok");
        core.submit(() -> calls.sweep(System.nanoTime())).sync(); // not yet past the backstop
        core.submit(() -> { }).sync(); // a hand-over the sweep made has run by now,
        callbacks.submit(() -> { }).get(5, TimeUnit.SECONDS); // and so has its delivery
        assertThat(out).isNotDone();
        try (LogCapture log = new LogCapture()) {
            core.submit(() -> calls.sweep(System.nanoTime() + TimeUnit.SECONDS.toNanos(11))).sync();
            assertThat(out.get(5, TimeUnit.SECONDS)).isEqualTo("unknown: no outcome within 10000 ms");
            assertThat(log.lines(l -> l.contains("WARN") && l.contains("call backstop used (1 so far): no outcome within 10000 ms")))
                    .as("every backstop use is logged as a WARN").hasSize(1);
        }
        assertThat(calls.backstopOutcomes()).as("every backstop use is counted").isEqualTo(1);
        // The state machine's late outcome is ignored: exactly one outcome per call.
        core.submit(() -> never.complete("late")).sync();
        assertThat(out.join()).startsWith("unknown");
    }

    /**
     * While the replication still makes progress on late calls (a rebuild they are parked on moves, a
     * large frame is being sent: {@link ReplicationCore#lateCallsProgressing()}), a call past its backstop
     * time keeps waiting; once progress stops, the next sweep gives it the unknown outcome.
     */
    @Test
    void theBackstopWaitsWhileTheReplicationStillProgresses() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean progressing = new java.util.concurrent.atomic.AtomicBoolean(true);
        CallHandOff waiting = new CallHandOff(core, null, callbacks, TimeUnit.SECONDS.toNanos(10), Clock.SYSTEM, 0,
                progressing::get);
        CompletableFuture<String> out = waiting.submit(c -> new CompletableFuture<>(), why -> "unknown: " + why);
        core.submit(() -> waiting.sweep(System.nanoTime() + TimeUnit.SECONDS.toNanos(60))).sync(); // far past it
        core.submit(() -> { }).sync();
        callbacks.submit(() -> { }).get(5, TimeUnit.SECONDS);
        assertThat(out).as("past its backstop while the replication progresses").isNotDone();
        assertThat(waiting.backstopOutcomes()).isZero();

        progressing.set(false);
        core.submit(() -> waiting.sweep(System.nanoTime() + TimeUnit.SECONDS.toNanos(60))).sync();
        assertThat(out.get(5, TimeUnit.SECONDS)).isEqualTo("unknown: no outcome within 10000 ms");
        assertThat(waiting.backstopOutcomes()).isEqualTo(1);
    }

    /**
     * The real opener: its backstop is 6 request timeouts ({@code replication.requestTimeoutMillis}),
     * on a call the state machine never answers; the call's outcome is the unknown one, logged as a
     * WARN and counted. 700 ms: 4200 ms, no other multiple of a configured time.
     */
    @Test
    void theOpenersBackstopIsSixRequestTimeoutsLoggedAndCounted(@TempDir Path dir) throws Exception {
        try (ProxiedCluster cluster = new ProxiedCluster(dir, 2, c -> c
                .withTimings(Duration.ofMillis(100), Duration.ofMillis(1500), Duration.ofMillis(700)));
             LogCapture log = new LogCapture()) {
            assertThat(cluster.config.requestTimeout()).isEqualTo(Duration.ofMillis(700));
            long before = cluster.opener.backstopOutcomes();
            long start = System.nanoTime();
            CompletableFuture<Ack> out = cluster.opener.call(c -> new CompletableFuture<Ack>(), why -> Ack.failed(Status.TIMEOUT, why));
            Ack a = out.get(60, TimeUnit.SECONDS);
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(a.status()).isEqualTo(Status.TIMEOUT);
            assertThat(a.reason()).isEqualTo("no outcome within 4200 ms");
            // Never earlier (the opener's clock discounts its own pauses: it can only be later).
            assertThat(elapsedMillis).as("ms until the backstop's outcome").isGreaterThanOrEqualTo(4200);
            assertThat(cluster.opener.backstopOutcomes() - before).as("counted").isEqualTo(1);
            assertThat(log.await(l -> l.contains("WARN") && l.contains("call backstop used")
                            && l.contains("no outcome within 4200 ms"), 10_000, "the backstop's WARN"))
                    .contains("CallHandOff");
        }
    }

    /**
     * A real put the replication gives no outcome of its own (here: it fails inside, a null id):
     * the put's outcome is TIMEOUT (outcome unknown), never an exceptional future, with a WARN line,
     * counted.
     */
    @Test
    void aPutWithoutTheStateMachinesOutcomeEndsTimeoutLoggedAndCounted(@TempDir Path dir) throws Exception {
        try (ProxiedCluster cluster = new ProxiedCluster(dir, 2, c -> c)) {
            KvsQueue q = cluster.openWriter("spool.backstop", "james-a");
            assertThat(q.put("a".getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], new byte[1]).get(30, TimeUnit.SECONDS)
                    .isOk()).isTrue();
            long before = cluster.opener.backstopOutcomes();
            try (LogCapture log = new LogCapture()) {
                Ack a = q.put(null, 0, 0, new byte[0], new byte[1]).get(30, TimeUnit.SECONDS);
                assertThat(a.status()).as("outcome %s", a).isEqualTo(Status.TIMEOUT);
                assertThat(a.reason()).startsWith("replication failed: java.lang.NullPointerException");
                assertThat(cluster.opener.backstopOutcomes() - before).as("counted").isEqualTo(1);
                log.await(l -> l.contains("WARN") && l.contains("call backstop used")
                        && l.contains("replication failed: java.lang.NullPointerException"), 10_000, "the WARN");
            }
            // The queue goes on.
            assertThat(q.put("b".getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], new byte[1]).get(30, TimeUnit.SECONDS)
                    .isOk()).isTrue();
        }
    }

    @Test
    void aCallThatFailsInsideTheReplicationGetsTheUnknownOutcome() throws Exception {
        try (LogCapture log = new LogCapture()) {
            CompletableFuture<String> thrown = calls.submit(c -> {
                throw new IllegalStateException("bug");
            }, why -> "unknown: " + why);
            CompletableFuture<String> failed = calls.submit(c -> CompletableFuture.failedFuture(new IllegalStateException("bug 2")),
                    why -> "unknown: " + why);
            assertThat(thrown.get(5, TimeUnit.SECONDS)).isEqualTo("unknown: replication failed: java.lang.IllegalStateException: bug");
            assertThat(failed.get(5, TimeUnit.SECONDS)).contains("bug 2").startsWith("unknown: replication failed");
            assertThat(log.lines(l -> l.contains("WARN") && l.contains("call backstop used") && l.contains("replication failed")))
                    .as("each failure inside the replication is logged as a WARN").hasSize(2);
        }
        assertThat(calls.backstopOutcomes()).isEqualTo(2);
        // Without an unknown outcome (internal calls), the failure is passed on as it is.
        CompletableFuture<String> plain = calls.submit(c -> CompletableFuture.failedFuture(new IllegalStateException("bug 3")), null);
        assertThat(plain).failsWithin(5, TimeUnit.SECONDS);
    }

    @Test
    void callersBeyondTheRoomWaitForAnOutcomeInsteadOfGrowingABacklog() throws Exception {
        CallHandOff bounded = new CallHandOff(core, null, callbacks, TimeUnit.SECONDS.toNanos(10), Clock.SYSTEM, 2, null);
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> second = new CompletableFuture<>();
        CompletableFuture<String> out1 = bounded.submit(c -> first, why -> "unknown");
        CompletableFuture<String> out2 = bounded.submit(c -> second, why -> "unknown");
        java.util.concurrent.atomic.AtomicBoolean thirdRan = new java.util.concurrent.atomic.AtomicBoolean();
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<CompletableFuture<String>> third = CompletableFuture.supplyAsync(() -> bounded.submit(c -> {
                thirdRan.set(true);
                return CompletableFuture.completedFuture("third");
            }, why -> "unknown"), caller);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (bounded.heldCallers() == 0) { // the caller found no room and waits
                assertThat(System.nanoTime()).as("the third caller waits for room").isLessThan(deadline);
                Thread.sleep(5);
            }
            core.submit(() -> { }).sync(); // the core ran everything handed to it so far
            assertThat(thirdRan).as("a call beyond the room is not handed to the core").isFalse();
            assertThat(third).isNotDone();
            // A call made on the core's own loop is never held (it would hold up what makes room).
            CompletableFuture<String> fromCore = core.submit(() -> bounded.submit(c -> CompletableFuture.completedFuture("core"),
                    why -> "unknown")).get(5, TimeUnit.SECONDS);
            assertThat(fromCore.get(5, TimeUnit.SECONDS)).isEqualTo("core");

            core.submit(() -> first.complete("one")).sync(); // an outcome makes room
            assertThat(out1.get(5, TimeUnit.SECONDS)).isEqualTo("one");
            assertThat(third.get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS)).isEqualTo("third");
            assertThat(thirdRan).isTrue();
            core.submit(() -> second.complete("two")).sync();
            assertThat(out2.get(5, TimeUnit.SECONDS)).isEqualTo("two");
        } finally {
            caller.shutdownNow();
        }
    }

    @Test
    void aCallerThatFindsNoRoomWithinTheBackstopGetsTheUnknownOutcomeAndNothingIsSent() throws Exception {
        CallHandOff bounded = new CallHandOff(core, null, callbacks, TimeUnit.MILLISECONDS.toNanos(200), Clock.SYSTEM, 1, null);
        CompletableFuture<String> stuck = bounded.submit(c -> new CompletableFuture<>(), why -> "unknown: " + why);
        java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
        CompletableFuture<String> refused = bounded.submit(c -> {
            ran.set(true);
            return CompletableFuture.completedFuture("sent");
        }, why -> "unknown: " + why);
        assertThat(refused.get(5, TimeUnit.SECONDS)).startsWith("unknown: no room in the replication client (1 calls inside)")
                .endsWith("not sent");
        assertThat(ran).isFalse();
        assertThat(stuck).isNotDone();
    }
}
