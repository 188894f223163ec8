package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/**
 * Property test of the pure core: 3 James nodes issue random store/remove/removeAll operations
 * while observing each other's operations in random (not causal) order; 2 storage replicas receive
 * every operation in their own random order, with duplicates, down periods (ops missed, caught up
 * later) and crashes (state lost, everything replayed from the logs). After all operations are
 * delivered everywhere, all 5 states must equal the OR-set specification computed from the set of
 * operations alone. Seeds: {@code -Dorset.seeds} (default 1000), ops per seed {@code -Dorset.ops}
 * (default 100); a failing seed is printed and can be rerun with {@code -Dorset.seed}.
 */
class OrSetPropertyTest {
    private static final int OPS = Integer.getInteger("orset.ops", 100);
    private static final int KEYS = 6;

    private final Stats stats = new Stats();

    @Test
    void replicasConvergeToTheOrSetSpecificationWhateverTheDelivery() {
        long seeds = Seeds.runAll("OR-set property", "orset.seeds", 1000, "orset.seed", this::run);
        System.out.printf("OR-set property: %d seeds x %d ops: %d stores, %d removes, %d removeAlls, %d deliveries "
                + "(%d duplicates, %d removes delivered before an add they remove), %d crashes, %d down periods, "
                + "%d adds concurrent with a remove of their key, %d observed adds removed%n",
            seeds, OPS, stats.stores, stats.removes, stats.removeAlls, stats.deliveries, stats.duplicates,
            stats.removeBeforeAdd, stats.crashes, stats.downPeriods, stats.addWins, stats.observedRemoved);
        assertThat(stats.addWins).isPositive();
        assertThat(stats.removeBeforeAdd).isPositive();
    }

    private static final class Stats {
        long stores, removes, removeAlls, deliveries, duplicates, removeBeforeAdd, crashes, downPeriods, addWins, observedRemoved;
    }

    /** A node or replica: its state and which operations (by index) it has applied. */
    private static final class Site {
        final String name;
        OrSet<Integer> state = new OrSet<>();
        BitSet applied = new BitSet();
        boolean down;

        Site(String name) {
            this.name = name;
        }
    }

    private void run(long seed) {
        Random random = new Random(seed);
        List<OrSetOp<Integer>> ops = new ArrayList<>();
        List<Site> nodes = List.of(new Site("n0"), new Site("n1"), new Site("n2"));
        List<Site> replicas = List.of(new Site("r0"), new Site("r1"));
        long[] sessions = {random.nextLong() & Long.MAX_VALUE, random.nextLong() & Long.MAX_VALUE, random.nextLong() & Long.MAX_VALUE};
        long[] counters = new long[3];

        while (ops.size() < OPS) {
            int action = random.nextInt(100);
            if (action < 35) {
                int n = random.nextInt(3);
                Site node = nodes.get(n);
                Issued issued = issue(random, node.state, () -> new Tag(node.name, sessions[n], ++counters[n]), ops.size());
                String key = issued.key();
                int kind = issued.kind();
                if (kind < 6) {
                    stats.stores++;
                } else if (kind < 9) {
                    stats.removes++;
                } else {
                    stats.removeAlls++;
                }
                for (OrSetOp<Integer> op : issued.ops()) {
                    if (op instanceof OrSetOp.Remove<Integer> remove) {
                        countAddWins(remove, nodes, ops, node);
                    }
                    node.state.apply(op);
                    node.applied.set(ops.size());
                    ops.add(op);
                }
                // At the source, right after the operation:
                if (kind < 6) {
                    assertThat(node.state.contains(key)).as("store visible at its source").isTrue();
                    assertThat(node.state.winner(key).map(OrSet.Entry::payload)).as("a store replaces the observed mail")
                        .contains(ops.size() - 1);
                } else if (kind < 9) {
                    assertThat(node.state.contains(key)).as("remove effective at its source").isFalse();
                } else {
                    assertThat(node.state.size()).as("removeAll effective at its source").isZero();
                }
            } else if (action < 60) {
                deliverOne(random, nodes.get(random.nextInt(3)), ops);
            } else if (action < 92) {
                Site replica = replicas.get(random.nextInt(2));
                if (!replica.down) {
                    deliverOne(random, replica, ops);
                }
            } else if (action < 98) {
                Site replica = replicas.get(random.nextInt(2));
                replica.down = !replica.down;
                if (replica.down) {
                    stats.downPeriods++;
                }
            } else {
                // A replica crashes and loses its state: rebuilt later from the (durable) logs.
                Site replica = replicas.get(random.nextInt(2));
                replica.state = new OrSet<>();
                replica.applied = new BitSet();
                stats.crashes++;
            }
        }

        // Everything delivered everywhere, in each site's own random order, with duplicates.
        List<Site> all = new ArrayList<>(nodes);
        all.addAll(replicas);
        for (Site site : all) {
            site.down = false;
            while (site.applied.cardinality() < ops.size()) {
                deliverOne(random, site, ops);
            }
        }

        OrSetSpec spec = OrSetSpec.of(ops);
        for (Site site : all) {
            assertThat(site.state.liveTags()).as("live tags of %s", site.name).isEqualTo(spec.live());
            assertThat(site.state.removedTags()).as("removed tags of %s", site.name).isEqualTo(spec.removed());
            for (String key : spec.live().keySet()) {
                assertThat(site.state.winner(key).map(OrSet.Entry::tag)).as("winner of %s at %s", key, site.name)
                    .isEqualTo(spec.winner().get(key));
            }
        }
        // Observed-remove: every tag a remove observed is gone; add-wins: every other add survives.
        Set<Tag> observedByARemove = new HashSet<>(spec.removed());
        for (OrSetOp<Integer> op : ops) {
            if (op instanceof OrSetOp.Add<Integer> add) {
                boolean live = nodes.get(0).state.isLive(add.tag());
                assertThat(live).as("add %s live iff no remove observed it", add.tag()).isEqualTo(!observedByARemove.contains(add.tag()));
                if (!live) {
                    stats.observedRemoved++;
                }
            }
        }
    }

    /** One random operation of a node: its key, its kind (0-5 store, 6-8 remove, 9 removeAll), what it wrote. */
    record Issued(String key, int kind, List<OrSetOp<Integer>> ops) {
    }

    /**
     * A node's random operation (shared with {@link OrSetGcPropertyTest}): a key of {@value #KEYS},
     * a kind, then 0-5 a store (a random timestamp below 50, {@code index} as payload), 6-8 a remove,
     * 9 a removeAll (1 to 3 tags per operation); each operation's tag from {@code nextTag}.
     */
    static Issued issue(Random random, OrSet<Integer> state, Supplier<Tag> nextTag, int index) {
        String key = "k" + random.nextInt(KEYS);
        int kind = random.nextInt(10);
        List<OrSetOp<Integer>> made = new ArrayList<>();
        if (kind < 6) {
            made.add(state.prepareAdd(key, nextTag.get(), random.nextInt(50), index));
        } else if (kind < 9) {
            state.prepareRemove(key, nextTag.get()).ifPresent(made::add);
        } else {
            made.addAll(state.prepareRemoveAll(nextTag, 1 + random.nextInt(3)));
        }
        return new Issued(key, kind, made);
    }

    /** Counts adds of keys this remove touches that its source had not observed (concurrent adds). */
    private void countAddWins(OrSetOp.Remove<Integer> remove, List<Site> nodes, List<OrSetOp<Integer>> ops, Site source) {
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i) instanceof OrSetOp.Add<Integer> add && remove.tags().contains(add.tag())) {
                keys.add(add.key());
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i) instanceof OrSetOp.Add<Integer> add && keys.contains(add.key()) && !source.applied.get(i)) {
                stats.addWins++; // checked at the end: it is live unless a later remove observed it
            }
        }
    }

    private void deliverOne(Random random, Site site, List<OrSetOp<Integer>> ops) {
        if (ops.isEmpty()) {
            return;
        }
        int index;
        boolean duplicate = random.nextInt(10) == 0 && site.applied.cardinality() > 0;
        if (duplicate) {
            do {
                index = random.nextInt(ops.size());
            } while (!site.applied.get(index));
            stats.duplicates++;
        } else {
            List<Integer> pending = new ArrayList<>();
            for (int i = site.applied.nextClearBit(0); i < ops.size(); i = site.applied.nextClearBit(i + 1)) {
                pending.add(i);
            }
            if (pending.isEmpty()) {
                return;
            }
            index = pending.get(random.nextInt(pending.size()));
        }
        OrSetOp<Integer> op = ops.get(index);
        if (op instanceof OrSetOp.Remove<Integer> remove) {
            for (Tag tag : remove.tags()) {
                if (!site.state.isLive(tag) && !site.state.isRemoved(tag)) {
                    stats.removeBeforeAdd++;
                    break;
                }
            }
        }
        site.state.apply(op);
        site.applied.set(index);
        stats.deliveries++;
    }
}
