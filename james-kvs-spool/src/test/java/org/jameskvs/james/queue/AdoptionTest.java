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
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.repository.KvsMailRepository;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.cluster.AdoptionView;
import org.jameskvs.james.cluster.ClusterWatch;
import org.jameskvs.james.cluster.NamespaceReclaim;
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
    private static final String[] FAST_LEASES = {"replication.leaseRenewMillis", "200", "replication.leaseTimeoutMillis",
        "1500", "adoption.checkIntervalMillis", "200", "idlePollInterval", "100", "adoption.moveBlock", "16"};
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
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline) && !drained(watch, "ns-a")) {
            Thread.sleep(100);
        }
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
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline) && !drained(holder, "ns-a")) {
            Thread.sleep(100);
        }
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
        Instant adopted = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(adopted) && !drained(watch, "ns-a")) {
            Thread.sleep(100);
        }
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

        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline) && !watch.adoptions().get(0).state().equals("ENDED")) {
            Thread.sleep(100);
        }
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
