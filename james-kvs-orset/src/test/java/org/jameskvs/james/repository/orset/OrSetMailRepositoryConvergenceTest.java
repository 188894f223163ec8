package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepositoryPath;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.james.server.core.MailImpl;
import org.apache.mailet.Mail;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three "James nodes" (own connection, own KvsQueues, own OrSetMailRepository on the same
 * repository URL) on one real KVS server.
 */
class OrSetMailRepositoryConvergenceTest {
    private static final MailRepositoryUrl URL = MailRepositoryUrl.fromPathAndProtocol(MailRepositoryPath.from("var/mail/error"), "kvs");
    @RegisterExtension
    static final OrSetTestKvs kvs = new OrSetTestKvs();

    private static OrSetMailRepository repository(OrSetTestKvs.Node node, boolean syncOnAccess) {
        return new OrSetMailRepository(node.queues(), node.opener(), URL, node.id(),
            new OrSetMailRepository.Options(syncOnAccess, Duration.ofMillis(50), Duration.ofSeconds(2)), System::currentTimeMillis);
    }

    private static List<OrSetMailRepository> nodes(int n, boolean syncOnAccess) {
        return nodes("conv-" + UUID.randomUUID(), n, syncOnAccess);
    }

    private static List<OrSetMailRepository> nodes(String namespace, int n, boolean syncOnAccess) {
        List<OrSetMailRepository> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(repository(kvs.node(namespace, "james" + i), syncOnAccess));
        }
        return out;
    }

    static Mail mail(String name, String text) throws Exception {
        return MailImpl.builder().name(name).sender("sender@example.com").addRecipient("rcpt@example.com")
            .mimeMessage(org.apache.james.core.builder.MimeMessageBuilder.mimeMessageBuilder().setSubject(name).setText(text))
            .build();
    }

    private static void awaitConverged(List<OrSetMailRepository> repositories) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            repositories.forEach(OrSetMailRepository::sync);
            Map<String, Set<Tag>> first = repositories.get(0).liveTags();
            if (repositories.stream().allMatch(r -> r.liveTags().equals(first)) || System.nanoTime() > deadline) {
                return;
            }
            Thread.sleep(20);
        }
    }

    @Test
    void concurrentStoresAndRemovesFromThreeNodesConverge() throws Exception {
        String namespace = "conv-" + UUID.randomUUID();
        List<OrSetMailRepository> repositories = nodes(namespace, 3, true);
        int threadsPerNode = 4;
        int opsPerThread = 60;
        ExecutorService pool = Executors.newFixedThreadPool(3 * threadsPerNode);
        CountDownLatch start = new CountDownLatch(1);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Future<?>> futures = new ArrayList<>();
        for (int n = 0; n < 3; n++) {
            OrSetMailRepository repository = repositories.get(n);
            for (int t = 0; t < threadsPerNode; t++) {
                long seed = n * 100L + t;
                futures.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    try {
                        start.await();
                        for (int i = 0; i < opsPerThread; i++) {
                            String key = "mail-" + random.nextInt(40);
                            int r = random.nextInt(100);
                            if (r < 60) {
                                repository.store(mail(key, repository.nodeId() + " " + seed + " " + i));
                            } else if (r < 98) {
                                repository.remove(new MailKey(key));
                            } else {
                                repository.removeAll();
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(errors).isEmpty();

        // A fourth node, started afterwards, rebuilds the same state from the logs alone.
        OrSetMailRepository observer = repository(kvs.node(namespace, "observer"), true);
        List<OrSetMailRepository> all = new ArrayList<>(repositories);
        all.add(observer);
        awaitConverged(all);
        Map<String, Set<Tag>> state = all.get(0).liveTags();
        for (OrSetMailRepository r : all) {
            assertThat(r.liveTags()).as("state of %s", r.nodeId()).isEqualTo(state);
            List<String> listed = new ArrayList<>();
            r.list().forEachRemaining(k -> listed.add(k.asString()));
            assertThat(listed).containsExactlyElementsOf(state.keySet());
            assertThat(r.size()).isEqualTo(state.size());
        }
        for (String key : state.keySet()) {
            Mail a = repositories.get(0).retrieve(new MailKey(key));
            Mail b = repositories.get(1).retrieve(new MailKey(key));
            Mail c = repositories.get(2).retrieve(new MailKey(key));
            assertThat(a).isNotNull();
            assertThat(a.getName()).isEqualTo(key);
            String text = (String) a.getMessage().getContent();
            assertThat((String) b.getMessage().getContent()).isEqualTo(text);
            assertThat((String) c.getMessage().getContent()).isEqualTo(text);
        }
        int tombstonesBefore = repositories.get(0).tombstones();

        // Garbage collection: tombstones, removed ADDs and REMOVE records go; the state stays.
        int rounds = collectUntilClean(all, state);
        for (OrSetMailRepository r : all) {
            assertThat(r.liveTags()).as("state of %s after GC", r.nodeId()).isEqualTo(state);
            assertThat(r.tombstones()).as("tombstones of %s after GC", r.nodeId()).isZero();
        }
        int liveTags = state.values().stream().mapToInt(Set::size).sum();
        assertThat(repositories.stream().mapToInt(OrSetMailRepository::ownRecords).sum())
            .as("records left in the logs = live ADDs").isEqualTo(liveTags);
        // A node started after the collection rebuilds the same state from what is left.
        OrSetMailRepository late = repository(kvs.node(namespace, "late"), true);
        late.sync();
        assertThat(late.liveTags()).isEqualTo(state);
        for (String key : state.keySet()) {
            assertThat(late.retrieve(new MailKey(key)).getName()).isEqualTo(key);
        }
        System.out.printf("OR-set repository convergence%s: 3 nodes x %d threads x %d ops -> %d keys, %d tombstones on node 0; "
                + "after %d GC rounds: 0 tombstones, %d records left in the logs%n", OrSetTestKvs.REPLICATED ? " (replicated)" : "",
            threadsPerNode, opsPerThread, state.size(), tombstonesBefore, rounds, liveTags);
        late.close();
        observer.close();
        repositories.forEach(OrSetMailRepository::close);
    }

    /** GC rounds on every node (bounded: 40 rounds, 60 s) until no node holds a tombstone. */
    static int collectUntilClean(List<OrSetMailRepository> repositories, Map<String, Set<Tag>> state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int rounds = 0;
        while (rounds < 40 && System.nanoTime() < deadline) {
            rounds++;
            repositories.forEach(OrSetMailRepository::collectGarbageNow);
            for (OrSetMailRepository r : repositories) {
                assertThat(r.liveTags()).as("state of %s during GC round %d", r.nodeId(), rounds).isEqualTo(state);
            }
            if (repositories.stream().allMatch(r -> r.tombstones() == 0)) {
                break;
            }
        }
        return rounds;
    }

    @Test
    void lateNodeRebuildsTheStateFromTheLogs() throws Exception {
        String namespace = "late-" + UUID.randomUUID();
        List<OrSetMailRepository> repositories = nodes(namespace, 2, true);
        for (int i = 0; i < 30; i++) {
            repositories.get(i % 2).store(mail("m" + i, "text " + i));
        }
        repositories.get(0).remove(new MailKey("m1"));
        repositories.get(1).remove(new MailKey("m2"));
        awaitConverged(repositories);
        OrSetMailRepository late = repository(kvs.node(namespace, "late"), true);
        late.sync();
        assertThat(late.liveTags()).isEqualTo(repositories.get(0).liveTags()).hasSize(28);
        assertThat(late.retrieve(new MailKey("m3")).getName()).isEqualTo("m3");
        late.close();
        repositories.forEach(OrSetMailRepository::close);
    }

    @Test
    void concurrentStoreWinsOverRemoveAndObservedRemoveRemoves() throws Exception {
        List<OrSetMailRepository> repositories = nodes(2, false);
        OrSetMailRepository a = repositories.get(0);
        OrSetMailRepository b = repositories.get(1);
        a.store(mail("k", "v1"));
        a.store(mail("gone", "x"));
        b.sync();
        assertThat(b.containsLocally("k")).isTrue();
        // Concurrently: a stores k again (not seen by b), b removes k (observed v1 only).
        a.store(mail("k", "v2"));
        b.remove(new MailKey("k"));
        b.remove(new MailKey("gone"));
        assertThat(b.containsLocally("k")).isFalse();
        awaitConverged(repositories);
        for (OrSetMailRepository r : repositories) {
            assertThat(r.containsLocally("k")).as("add wins at %s", r.nodeId()).isTrue();
            assertThat(r.containsLocally("gone")).as("observed remove at %s", r.nodeId()).isFalse();
            assertThat((String) r.retrieve(new MailKey("k")).getMessage().getContent()).isEqualTo("v2");
        }
        Map<String, Set<Tag>> state = a.liveTags();
        collectUntilClean(repositories, state);
        for (OrSetMailRepository r : repositories) {
            assertThat(r.containsLocally("k")).as("add still wins after GC at %s", r.nodeId()).isTrue();
            assertThat(r.containsLocally("gone")).as("still removed after GC at %s", r.nodeId()).isFalse();
            assertThat(r.tombstones()).isZero();
        }
        repositories.forEach(OrSetMailRepository::close);
    }
}
