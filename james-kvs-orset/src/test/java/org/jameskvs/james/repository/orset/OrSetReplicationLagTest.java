package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepositoryPath;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replication lag as the paper measures it (the time until the other replica shows the update),
 * here: from the acknowledged store on node A until node B's repository shows the key, B being
 * polled. Two read modes of B: catching up on each access (every poll reads A's log), and a
 * background tailer (every 10 ms) with B's local state polled. {@code -Dorset.lag.stores} (1000).
 */
class OrSetReplicationLagTest {
    private static final int STORES = Integer.getInteger("orset.lag.stores", 1000);
    private static final MailRepositoryUrl URL = MailRepositoryUrl.fromPathAndProtocol(MailRepositoryPath.from("var/mail/error"), "kvs");
    @RegisterExtension
    static final OrSetTestKvs kvs = new OrSetTestKvs();

    @Test
    void lagWithCatchUpOnAccess() throws Exception {
        measure("catch-up on access (B polls retrieve)", false);
    }

    @Test
    void lagWithBackgroundTailing() throws Exception {
        measure("background tailing every 10 ms (B's state polled)", true);
    }

    private void measure(String mode, boolean tailing) throws Exception {
        String namespace = "lag-" + UUID.randomUUID();
        OrSetTestKvs.Node nodeA = kvs.node(namespace, "A");
        OrSetTestKvs.Node nodeB = kvs.node(namespace, "B");
        OrSetMailRepository a = new OrSetMailRepository(nodeA.queues(), nodeA.opener(), URL, "A",
            new OrSetMailRepository.Options(false, Duration.ofMillis(100), Duration.ofMinutes(5)), System::currentTimeMillis);
        OrSetMailRepository b = new OrSetMailRepository(nodeB.queues(), nodeB.opener(), URL, "B",
            new OrSetMailRepository.Options(!tailing, Duration.ofMillis(100), Duration.ofMinutes(5)), System::currentTimeMillis);
        // Warm-up: B discovers A's log.
        a.store(OrSetMailRepositoryConvergenceTest.mail("warmup", "w"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (b.retrieve(new MailKey("warmup")) == null && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        if (tailing) {
            b.startTailing(Duration.ofMillis(10));
        }
        long[] lagMicros = new long[STORES];
        long[] storeMicros = new long[STORES];
        for (int i = 0; i < STORES; i++) {
            String key = "lag-" + i;
            long t0 = System.nanoTime();
            a.store(OrSetMailRepositoryConvergenceTest.mail(key, "body " + i));
            long acked = System.nanoTime();
            storeMicros[i] = (acked - t0) / 1000;
            MailKey mailKey = new MailKey(key);
            while (true) {
                boolean visible = tailing ? b.containsLocally(key) : b.retrieve(mailKey) != null;
                if (visible) {
                    break;
                }
                if (System.nanoTime() - acked > TimeUnit.SECONDS.toNanos(10)) {
                    throw new AssertionError("store " + key + " not visible on B after 10 s");
                }
                if (tailing) {
                    LockSupport.parkNanos(50_000);
                }
            }
            lagMicros[i] = (System.nanoTime() - acked) / 1000;
        }
        Arrays.sort(lagMicros);
        Arrays.sort(storeMicros);
        System.out.printf("OR-set replication lag, %s, %d stores: lag p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
                + "store latency on A p50 %.2f ms, p99 %.2f ms%n", mode, STORES,
            pct(lagMicros, 50), pct(lagMicros, 99), lagMicros[STORES - 1] / 1000.0, pct(storeMicros, 50), pct(storeMicros, 99));
        assertThat(b.size()).isEqualTo(STORES + 1L);
        a.close();
        b.close();
    }

    private static double pct(long[] sorted, int p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, index)] / 1000.0;
    }
}
