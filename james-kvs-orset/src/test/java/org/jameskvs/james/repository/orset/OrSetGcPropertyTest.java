package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * {@link OrSetPropertyTest} extended to the garbage collection rules of {@link GarbageCollector}
 * (G1..G4), on a model of the per-node logs: 3 James nodes issue random store/remove/removeAll
 * operations into their own log; they and 2 more readers ("replicas") read the records still in the
 * logs in random order, with duplicates, down periods and crashes (state lost, logs re-read; nodes
 * crash too). Interleaved at random: G1 (a node deletes its removed ADDs, or shrinks them to their
 * superseded tags), G2 (a site forgets a tombstone whose ADD is gone from the logs), G3 (a node
 * deletes its REMOVE records whose tags it has all collected), G4 (a site drops a live tag whose ADD
 * is gone). After everything is read everywhere and GC has run to quiescence, every site must hold
 * the OR-set specification computed from all operations ever issued (convergence, add-wins,
 * observed-remove), no tombstone, and the logs only the live ADDs. At every G4 drop the tag must be
 * removed by the specification (GC never removes an add that won).
 * Seeds {@code -Dorset.gc.seeds} (default 1000), ops {@code -Dorset.ops} (100), one seed
 * {@code -Dorset.gc.seed}.
 */
class OrSetGcPropertyTest {
    private static final int OPS = Integer.getInteger("orset.ops", 100);

    private long g1, g2, g3, g4, crashes, addWins, reads;

    @Test
    void garbageCollectionKeepsConvergenceAndAddWins() {
        long seeds = Seeds.runAll("OR-set GC property", "orset.gc.seeds", 1000, "orset.gc.seed", this::run);
        System.out.printf("OR-set GC property: %d seeds x %d ops: %d reads, %d crashes, %d adds concurrent with a remove; "
                + "collected: G1 %d ADDs, G2 %d tombstones, G3 %d REMOVE records, G4 %d stale live adds%n",
            seeds, OPS, reads, crashes, addWins, g1, g2, g3, g4);
        assertThat(g1).isPositive();
        assertThat(g2).isPositive();
        assertThat(g3).isPositive();
        assertThat(g4).as("the race G4 exists for (an ADD read, its REMOVE collected before being read) happened").isPositive();
        assertThat(addWins).isPositive();
    }

    private static final class Site {
        final String name;
        final int writer; // node index, or -1 for a reader
        OrSet<Integer> state = new OrSet<>();
        BitSet applied = new BitSet(); // records applied since the last crash
        boolean down;

        Site(String name, int writer) {
            this.name = name;
            this.writer = writer;
        }
    }

    /** The logs: record i is what op i's writer still has in its log under op i's id (null: deleted). */
    private static final class Logs {
        final List<OrSetOp<Integer>> issued = new ArrayList<>();
        final List<OrSetOp<Integer>> records = new ArrayList<>();
        final List<Integer> writerOf = new ArrayList<>();

        boolean addPresent(Tag tag) {
            for (OrSetOp<Integer> r : records) {
                if (r instanceof OrSetOp.Add<Integer> add && add.tag().equals(tag)) {
                    return true;
                }
            }
            return false;
        }

        Set<Tag> removedSoFar() {
            return OrSetSpec.of(issued).removed();
        }
    }

    private void run(long seed) {
        Random random = new Random(seed);
        Logs logs = new Logs();
        List<Site> nodes = List.of(new Site("n0", 0), new Site("n1", 1), new Site("n2", 2));
        List<Site> sites = new ArrayList<>(nodes);
        sites.add(new Site("r0", -1));
        sites.add(new Site("r1", -1));
        long[] sessions = new long[3];
        long[] counters = new long[3];
        for (int n = 0; n < 3; n++) {
            sessions[n] = random.nextLong() & Long.MAX_VALUE;
        }

        int steps = 0;
        while (logs.issued.size() < OPS && steps++ < OPS * 100) {
            int action = random.nextInt(100);
            if (action < 30) {
                int n = random.nextInt(3);
                Site node = nodes.get(n);
                List<OrSetOp<Integer>> made = OrSetPropertyTest.issue(random, node.state,
                    () -> new Tag(node.name, sessions[n], ++counters[n]), logs.issued.size()).ops();
                for (OrSetOp<Integer> op : made) {
                    if (op instanceof OrSetOp.Remove<Integer> remove) {
                        countAddWins(remove, logs, node);
                    }
                    node.state.apply(op);
                    node.applied.set(logs.issued.size());
                    logs.issued.add(op);
                    logs.records.add(op);
                    logs.writerOf.add(n);
                }
            } else if (action < 70) {
                Site site = sites.get(random.nextInt(sites.size()));
                if (!site.down) {
                    readOne(random, site, logs);
                }
            } else if (action < 76) {
                Site site = sites.get(3 + random.nextInt(2));
                site.down = !site.down;
            } else if (action < 78) {
                Site site = sites.get(random.nextInt(sites.size()));
                site.state = new OrSet<>();
                site.applied = new BitSet();
                crashes++;
            } else if (action < 84) {
                g1(nodes.get(random.nextInt(3)), logs);
            } else if (action < 90) {
                g2(sites.get(random.nextInt(sites.size())), logs);
            } else if (action < 95) {
                g3(nodes.get(random.nextInt(3)), logs);
            } else {
                g4(sites.get(random.nextInt(sites.size())), logs);
            }
        }

        // Everything read everywhere, GC to quiescence (bounded).
        for (int round = 0; round < 50; round++) {
            for (Site site : sites) {
                site.down = false;
                readAll(random, site, logs);
            }
            boolean changed = false;
            for (Site node : nodes) {
                changed |= g1(node, logs);
            }
            for (Site site : sites) {
                changed |= g2(site, logs);
                changed |= g4(site, logs);
            }
            for (Site node : nodes) {
                changed |= g3(node, logs);
            }
            if (!changed) {
                break;
            }
        }

        OrSetSpec spec = OrSetSpec.of(logs.issued);
        int liveTags = spec.live().values().stream().mapToInt(Set::size).sum();
        for (Site site : sites) {
            assertThat(site.state.liveTags()).as("live tags of %s", site.name).isEqualTo(spec.live());
            for (String key : spec.live().keySet()) {
                assertThat(site.state.winner(key).map(OrSet.Entry::tag)).as("winner of %s at %s", key, site.name)
                    .isEqualTo(spec.winner().get(key));
            }
            assertThat(site.state.removedTags()).as("tombstones of %s after GC", site.name).isEmpty();
        }
        List<OrSetOp<Integer>> left = logs.records.stream().filter(r -> r != null).toList();
        assertThat(left).as("records left in the logs").hasSize(liveTags).allMatch(r -> r instanceof OrSetOp.Add);
        // Add-wins / observed-remove against the issued operations.
        for (OrSetOp<Integer> op : logs.issued) {
            if (op instanceof OrSetOp.Add<Integer> add) {
                assertThat(sites.get(3).state.isLive(add.tag())).as("add %s live iff no remove observed it", add.tag())
                    .isEqualTo(!spec.removed().contains(add.tag()));
            }
        }
        // A reader started from scratch on what is left sees the same state.
        Site late = new Site("late", -1);
        readAll(random, late, logs);
        assertThat(late.state.liveTags()).isEqualTo(spec.live());
    }

    private void readOne(Random random, Site site, Logs logs) {
        List<Integer> candidates = new ArrayList<>();
        boolean duplicate = random.nextInt(10) == 0;
        for (int i = 0; i < logs.records.size(); i++) {
            if (logs.records.get(i) != null && site.applied.get(i) == duplicate) {
                candidates.add(i);
            }
        }
        if (candidates.isEmpty()) {
            return;
        }
        int i = candidates.get(random.nextInt(candidates.size()));
        site.state.apply(logs.records.get(i));
        site.applied.set(i);
        reads++;
    }

    private void readAll(Random random, Site site, Logs logs) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < logs.records.size(); i++) {
            if (logs.records.get(i) != null) {
                order.add(i);
            }
        }
        java.util.Collections.shuffle(order, random);
        for (int i : order) {
            site.state.apply(logs.records.get(i));
            site.applied.set(i);
            reads++;
        }
    }

    /** G1: the node deletes its ADDs it sees removed (or replaces them by a REMOVE of their superseded tags). */
    private boolean g1(Site node, Logs logs) {
        boolean changed = false;
        for (int i = 0; i < logs.records.size(); i++) {
            if (logs.writerOf.get(i) == node.writer && logs.records.get(i) instanceof OrSetOp.Add<Integer> add
                && node.state.isRemoved(add.tag())) {
                logs.records.set(i, add.supersedes().isEmpty() ? null : new OrSetOp.Remove<>(add.tag(), add.supersedes()));
                g1++;
                changed = true;
            }
        }
        return changed;
    }

    /** G2: a site forgets tombstones whose ADD is gone from the logs. */
    private boolean g2(Site site, Logs logs) {
        boolean changed = false;
        for (Tag tag : site.state.removedTags()) {
            if (!logs.addPresent(tag) && site.state.forgetTombstone(tag)) {
                g2++;
                changed = true;
            }
        }
        return changed;
    }

    /** G3: the node deletes its REMOVE records (applied since its last crash) whose tags it has all collected. */
    private boolean g3(Site node, Logs logs) {
        boolean changed = false;
        for (int i = 0; i < logs.records.size(); i++) {
            if (logs.writerOf.get(i) == node.writer && node.applied.get(i) && logs.records.get(i) instanceof OrSetOp.Remove<Integer> remove
                && remove.tags().stream().noneMatch(t -> node.state.isRemoved(t) || node.state.isLive(t))) {
                logs.records.set(i, null);
                g3++;
                changed = true;
            }
        }
        return changed;
    }

    /** G4: a site drops live tags whose ADD is gone from the logs; each must be removed by the specification. */
    private boolean g4(Site site, Logs logs) {
        boolean changed = false;
        Set<Tag> removed = null;
        for (OrSet.Entry<Integer> entry : site.state.entries()) {
            if (!logs.addPresent(entry.tag())) {
                if (removed == null) {
                    removed = logs.removedSoFar();
                }
                assertThat(removed).as("G4 drops only removed tags (%s at %s)", entry.tag(), site.name).contains(entry.tag());
                site.state.dropLive(entry.tag());
                g4++;
                changed = true;
            }
        }
        return changed;
    }

    private void countAddWins(OrSetOp.Remove<Integer> remove, Logs logs, Site source) {
        Set<String> keys = new HashSet<>();
        for (OrSetOp<Integer> op : logs.issued) {
            if (op instanceof OrSetOp.Add<Integer> add && remove.tags().contains(add.tag())) {
                keys.add(add.key());
            }
        }
        for (int i = 0; i < logs.issued.size(); i++) {
            if (logs.issued.get(i) instanceof OrSetOp.Add<Integer> add && keys.contains(add.key()) && !source.applied.get(i)
                && !source.state.isRemoved(add.tag())) {
                addWins++;
            }
        }
    }
}
