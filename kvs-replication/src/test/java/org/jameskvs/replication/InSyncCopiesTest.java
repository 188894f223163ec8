package org.jameskvs.replication;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The DAMAGED rule every reader with plain connections follows ({@link InSyncCopies#preferIntact}). */
class InSyncCopiesTest {
    private static final InSyncCopies.Choice BOTH = new InSyncCopies.Choice(Set.of("kvs1", "kvs2"), true);

    @Test
    void aDamagedCopyIsLeftOutWhileAnIntactOneIsRead() {
        InSyncCopies.Choice c = InSyncCopies.preferIntact(BOTH, Set.of("kvs1"));
        assertThat(c.nodes()).containsExactly("kvs2");
        assertThat(c.complete()).as("the intact copy alone tells what is gone").isTrue();
    }

    @Test
    void onlyDamagedCopiesAreReadButConcludeNothingFromAbsence() {
        InSyncCopies.Choice c = InSyncCopies.preferIntact(BOTH, Set.of("kvs1", "kvs2"));
        assertThat(c.nodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(c.complete()).isFalse();
    }

    @Test
    void intactCopiesAreKeptAsChosen() {
        assertThat(InSyncCopies.preferIntact(BOTH, Set.of("kvs3"))).isSameAs(BOTH);
    }
}
