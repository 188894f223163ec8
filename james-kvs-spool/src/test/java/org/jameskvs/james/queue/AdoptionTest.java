package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.jameskvs.james.CapturedLog;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.repository.KvsMailRepository;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.cluster.AdoptionView;
import org.jameskvs.james.cluster.ClusterWatch;
import org.jameskvs.james.cluster.NamespaceReclaim;
import org.jameskvs.james.cluster.PeerView;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Adoption of a lost James node's namespace on two real in-process KVS servers (replication on,
 * short leases): node A queues mail (ready and delayed, two queues, two priority levels) and stops
 * renewing its leases (its connections closed, as a kill does); node B's {@link ClusterWatch} sees the
 * lease expire, takes A's queues over and moves every mail into its own queues, delays kept, and its
 * error repository's mail into its own. Two
 * adopters racing for the same namespace: one holds it, the other stops, no mail lost. A returning:
 * takes its namespace back and the adopter's adoption ends, A not fenced.
 */
class AdoptionTest {
    private static final long LEASE_RENEW_MILLIS = 200;
    private static final long LEASE_TIMEOUT_MILLIS = 1500;
    private static final String[] FAST_LEASES = {"replication.leaseRenewMillis", String.valueOf(LEASE_RENEW_MILLIS),
        "replication.leaseTimeoutMillis", String.valueOf(LEASE_TIMEOUT_MILLIS), "adoption.checkIntervalMillis", "200",
        "idlePollInterval", "100", "adoption.moveBlock", "16"};
    private static final Duration DELAY = Duration.ofHours(1);

    private TwoKvsNodes nodes;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        Closing.inReverse(toClose);
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void aSurvivorAdoptsEveryQueueOfANodeWhoseLeaseExpiredKeepingDelays() throws Exception {
        nodes = new TwoKvsNodes();
        Node a = node("a");
        Set<String> queued = queueMail(a, 40);
        MailRepositoryUrl errors = MailRepositoryUrl.from("kvs://var/mail/error/");
        new KvsMailRepository(a.queues, errors).store(Mails.defaultMail().name("failed-on-a").build());
        a.die();

        Node b = node("b");
        ClusterWatch watch = b.watch();
        awaitUntil(() -> drained(watch, "ns-a"));
        assertThat(watch.adoptions()).as("adoptions").singleElement()
            .satisfies(view -> assertThat(view.state()).isEqualTo("DRAINED"))
            .satisfies(view -> assertThat(view.moved()).isEqualTo(queued.size() + 1));
        KvsMailRepository bErrors = new KvsMailRepository(b.queues, errors);
        assertThat(bErrors.size()).as("A's error repository entry, now in B's").isEqualTo(1);
        assertThat(bErrors.retrieve(new MailKey("failed-on-a")).getName()).isEqualTo("failed-on-a");
        ManageableMailQueue spool = b.factory.getQueue(MailQueueFactory.SPOOL).orElseThrow();
        ManageableMailQueue outgoing = b.factory.getQueue(MailQueueName.of("outgoing")).orElseThrow();
        Set<String> found = new HashSet<>();
        List<ManageableMailQueue.MailQueueItemView> delayed = new ArrayList<>();
        for (ManageableMailQueue queue : List.of(spool, outgoing)) {
            queue.browse().forEachRemaining(view -> {
                found.add(view.getMail().getName());
                if (view.getMail().getName().startsWith("delayed")) {
                    delayed.add(view);
                }
            });
        }
        assertThat(found).isEqualTo(queued);
        assertThat(delayed).isNotEmpty().allSatisfy(view -> assertThat(view.getNextDelivery()).hasValueSatisfying(
            next -> assertThat(next.toInstant()).isAfter(Instant.now().plus(DELAY).minusSeconds(600))));
        assertThat(b.queues.fencing().isFenced()).isFalse();
    }

    /**
     * The lease, not the watcher's start or a clock, decides when: while A runs and renews its lease, B
     * watches it and adopts nothing, for as many renewals of A's lease record as span twice the lease
     * timeout (counted in the record's own sequence numbers as B read them, not in the test's time);
     * A is not fenced. Once A is gone, B adopts only after the record it last read stayed unchanged for
     * the lease timeout by B's clock (its log line says for how long), that record being A's last one
     * (A's owner, no older than the renewals B had seen), and its claim holds a higher epoch.
     */
    @Test
    void noAdoptionWhileTheLeaseIsRenewedOnlyOnceItsLastRecordWentUnrenewedForTheTimeout() throws Exception {
        nodes = new TwoKvsNodes();
        Node a = node("a");
        queueMail(a, 8);
        try (CapturedLog log = CapturedLog.of(ClusterWatch.class)) {
            Node b = node("b");
            ClusterWatch watch = b.watch();
            PeerView first = awaitPeer(watch, view -> true);
            long renewals = 2 * LEASE_TIMEOUT_MILLIS / LEASE_RENEW_MILLIS;
            PeerView live = awaitPeer(watch, view -> !watch.adoptions().isEmpty()
                || view.epoch() == first.epoch() && view.seq() >= first.seq() + renewals);
            assertThat(watch.adoptions()).as("adopted while A renewed its lease (B read its record at seq %d, then %d)",
                first.seq(), live.seq()).isEmpty();
            assertThat(log.messages(ch.qos.logback.classic.Level.WARN, m -> m.contains("adopting namespace"))).isEmpty();
            assertThat(live.expired()).isFalse();
            assertThat(a.queues.fencing().isFenced()).isFalse();

            a.die();
            awaitUntil(() -> !watch.adoptions().isEmpty());
            assertThat(watch.adoptions()).as("adoption once A is gone").isNotEmpty();
            // While the adoption runs B no longer reads the lost node's lease: its view is the record it adopted on.
            PeerView adoptedOn = watch.peers().stream().filter(v -> v.namespace().equals("ns-a")).findFirst().orElseThrow();
            assertThat(adoptedOn.owner()).as("the record B adopted on is A's own").isEqualTo(first.owner())
                .doesNotStartWith("adopted-by:");
            assertThat(adoptedOn.epoch()).isEqualTo(first.epoch());
            assertThat(adoptedOn.seq()).as("no older than the renewals B had seen").isGreaterThanOrEqualTo(live.seq());
            List<String> adopting = log.messages(ch.qos.logback.classic.Level.WARN, m -> m.contains("adopting namespace ns-a"));
            assertThat(adopting).hasSize(1);
            java.util.regex.Matcher unrenewed = java.util.regex.Pattern.compile("not renewed for (\\d+) ms").matcher(adopting.get(0));
            assertThat(unrenewed.find()).as(adopting.get(0)).isTrue();
            assertThat(Long.parseLong(unrenewed.group(1))).as(adopting.get(0)).isGreaterThanOrEqualTo(LEASE_TIMEOUT_MILLIS);
            // The adoption is listed once it starts; its claim on A's lease is written as it goes:
            // wait for that record (bounded), then check it.
            String claimant = "adopted-by:" + b.queues.configuration().ownerName();
            awaitUntil(() -> peekLease(b, "ns-a").owner().equals(claimant));
            org.jameskvs.replication.Lease claim = peekLease(b, "ns-a");
            assertThat(claim.owner()).isEqualTo(claimant);
            assertThat(claim.epoch()).isGreaterThan(adoptedOn.epoch());
        }
    }

    /** A condition the test waits for; it may throw (a failed read counts as a failed test). */
    private interface Check {
        boolean holds() throws Exception;
    }

    /**
     * Waits until {@code condition} holds or 60 s pass, whichever is first; the assertions after the
     * wait say what was missing (never a fixed sleep that races the work).
     */
    private static void awaitUntil(Check condition) throws Exception {
        Instant deadline = Instant.now().plusSeconds(60);
        while (!condition.holds() && Instant.now().isBefore(deadline)) {
            Thread.sleep(50);
        }
    }

    private static org.jameskvs.replication.Lease peekLease(Node node, String namespace) throws Exception {
        return ((ReplicatedKvsOpener) node.opener).peekLease(NodeIdentityGuard.leaseQueueOf(namespace))
            .get(30, java.util.concurrent.TimeUnit.SECONDS).orElseThrow();
    }

    /** B's view of A's lease ({@code ns-a}) once it satisfies {@code condition}; bounded (60 s). */
    private static PeerView awaitPeer(ClusterWatch watch, java.util.function.Predicate<PeerView> condition) throws Exception {
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline)) {
            java.util.Optional<PeerView> view = watch.peers().stream().filter(v -> v.namespace().equals("ns-a")).findFirst();
            if (view.isPresent() && condition.test(view.get())) {
                return view.get();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("B's view of ns-a's lease not as expected within 60 s: " + watch.peers());
    }

    @Test
    void twoSurvivorsRacingForOneNamespaceLeaveItToOneAndLoseNothing() throws Exception {
        nodes = new TwoKvsNodes();
        Node a = node("a");
        Set<String> queued = queueMail(a, 60);
        a.die();
        Node b = node("b", "adoption.enabled", "false");
        Node c = node("c", "adoption.enabled", "false");
        ClusterWatch watchB = b.watch();
        ClusterWatch watchC = c.watch();
        CompletableFuture<AdoptionView> byB = CompletableFuture.supplyAsync(() -> adopt(watchB, "ns-a"));
        CompletableFuture<AdoptionView> byC = CompletableFuture.supplyAsync(() -> adopt(watchC, "ns-a"));
        List<AdoptionView> claims = List.of(byB.get(), byC.get());
        assertThat(claims).as("exactly one claim holds: %s", claims).filteredOn(v -> !v.state().equals("ENDED")).hasSize(1);

        // The holder moves everything; the other moved nothing.
        ClusterWatch holder = claims.get(0).state().equals("ENDED") ? watchC : watchB;
        Node holderNode = holder == watchB ? b : c;
        Node other = holder == watchB ? c : b;
        awaitUntil(() -> drained(holder, "ns-a"));
        assertThat(drained(holder, "ns-a")).as("%s", holder.adoptions()).isTrue();
        assertThat(names(holderNode)).isEqualTo(queued);
        assertThat(names(other)).isEmpty();
    }

    @Test
    void aReturningOwnerTakesItsNamespaceBackAndTheAdoptionEnds() throws Exception {
        nodes = new TwoKvsNodes();
        Node a = node("a");
        queueMail(a, 20);
        a.die();
        Node b = node("b");
        ClusterWatch watch = b.watch();
        awaitUntil(() -> drained(watch, "ns-a"));
        assertThat(drained(watch, "ns-a")).as("%s", watch.adoptions()).isTrue();

        // A comes back while B holds its queues: the start-up check lets it through, it takes them back.
        KvsSpoolConfiguration aConfiguration = configuration("a");
        KvsQueueOpener aOpener = nodes.connect(aConfiguration, UnaryOperator.identity());
        NodeIdentityGuard.check(aOpener, aConfiguration);
        java.util.Map<String, org.jameskvs.client.OpenResult> taken = NamespaceReclaim.takeBack(aOpener, aConfiguration);
        assertThat(taken).containsKey(NodeIdentityGuard.leaseQueueOf("ns-a"));
        // James takes a while to start after that: longer than a lease timeout. The taken-back queues keep
        // their leases renewed meanwhile, so B does not adopt them again.
        Thread.sleep(2 * 1500);
        Node back = new Node(aConfiguration, aOpener);
        taken.forEach((name, result) -> back.queues.useOpened(name, result.queue(), result.epoch()));
        back.factory.getQueue(MailQueueFactory.SPOOL).orElseThrow().enQueue(Mails.defaultMail().name("after-return").build());

        awaitUntil(() -> watch.adoptions().get(0).state().equals("ENDED"));
        assertThat(watch.adoptions()).singleElement().satisfies(view -> assertThat(view.state()).isEqualTo("ENDED"));
        assertThat(back.queues.fencing().isFenced()).isFalse();
        assertThat(b.queues.fencing().isFenced()).isFalse();
        Set<String> all = new HashSet<>(names(back));
        all.addAll(names(b));
        assertThat(all).as("every mail in A's or B's queues").hasSize(21);
    }

    private static AdoptionView adopt(ClusterWatch watch, String namespace) {
        try {
            return watch.adoptNow(namespace);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean drained(ClusterWatch watch, String namespace) {
        return watch.adoptions().stream().anyMatch(v -> v.namespace().equals(namespace) && v.state().equals("DRAINED"));
    }

    private static Set<String> names(Node node) throws Exception {
        Set<String> names = new HashSet<>();
        for (MailQueueName name : node.factory.listCreatedMailQueues()) {
            node.factory.getQueue(name).orElseThrow().browse().forEachRemaining(view -> names.add(view.getMail().getName()));
        }
        return names;
    }

    /** Ready mail in spool (two priority levels) and outgoing, and delayed mail in outgoing. */
    private static Set<String> queueMail(Node node, int count) throws Exception {
        ManageableMailQueue spool = node.factory.createQueue(MailQueueFactory.SPOOL);
        ManageableMailQueue outgoing = node.factory.createQueue(MailQueueName.of("outgoing"));
        Set<String> names = new HashSet<>();
        for (int i = 0; i < count; i++) {
            String name = (i % 4 == 3 ? "delayed-" : "ready-") + i;
            switch (i % 4) {
                case 0 -> spool.enQueue(Mails.defaultMail().name(name).build());
                case 1 -> spool.enQueue(Mails.defaultMail().name(name)
                    .attribute(new org.apache.mailet.Attribute(org.apache.james.queue.api.MailPrioritySupport.MAIL_PRIORITY,
                        org.apache.mailet.AttributeValue.of(8)))
                    .build());
                case 2 -> outgoing.enQueue(Mails.defaultMail().name(name).build());
                default -> outgoing.enQueue(Mails.defaultMail().name(name).build(), DELAY);
            }
            names.add(name);
        }
        return names;
    }

    private Node node(String id, String... more) {
        KvsSpoolConfiguration configuration = configuration(id, more);
        return new Node(configuration, nodes.connect(configuration, UnaryOperator.identity()));
    }

    private KvsSpoolConfiguration configuration(String id, String... more) {
        List<String> settings = new ArrayList<>(List.of(FAST_LEASES));
        settings.addAll(List.of("nodeId", "node-" + id, "namespace", "ns-" + id));
        settings.addAll(List.of(more));
        return nodes.configuration(settings.toArray(String[]::new));
    }

    /** One James node's spool side: its connections, queues, factory and (on demand) cluster watch. */
    private final class Node {
        final KvsQueueOpener opener;
        final KvsQueues queues;
        final KvsMailQueueFactory factory;

        Node(KvsSpoolConfiguration configuration, KvsQueueOpener opener) {
            this.opener = opener;
            this.queues = new KvsQueues(opener, configuration);
            this.factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
                new RecordingMetricFactory(), new NoopGaugeRegistry());
            toClose.add(factory::stop);
        }

        ClusterWatch watch() {
            ClusterWatch watch = new ClusterWatch((ReplicatedKvsOpener) opener, queues, factory).start();
            toClose.add(watch);
            return watch;
        }

        /** As a kill does: no more lease renewals (connections closed), the mail stays on the servers. */
        void die() throws Exception {
            factory.stop();
            ((AutoCloseable) opener).close();
        }
    }
}
