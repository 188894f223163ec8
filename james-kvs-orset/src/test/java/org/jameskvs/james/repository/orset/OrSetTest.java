package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** Hand-picked scenarios of the pure core and the operation codec. */
class OrSetTest {
    private static final Tag A1 = new Tag("a", 1, 1);
    private static final Tag A2 = new Tag("a", 1, 2);
    private static final Tag B1 = new Tag("b", 7, 1);

    @Test
    void concurrentAddWinsOverRemove() {
        OrSet<String> a = new OrSet<>();
        OrSet<String> b = new OrSet<>();
        OrSetOp.Add<String> add1 = a.prepareAdd("k", A1, 1, "v1");
        a.apply(add1);
        b.apply(add1);
        // Concurrently: a stores k again, b removes k (observed A1 only).
        OrSetOp.Add<String> add2 = a.prepareAdd("k", A2, 2, "v2");
        a.apply(add2);
        OrSetOp.Remove<String> remove = b.prepareRemove("k", B1).orElseThrow();
        b.apply(remove);
        assertThat(b.contains("k")).isFalse();
        a.apply(remove);
        b.apply(add2);
        assertThat(a.liveTags()).isEqualTo(b.liveTags()).isEqualTo(java.util.Map.of("k", Set.of(A2)));
        assertThat(b.winner("k").orElseThrow().payload()).isEqualTo("v2");
    }

    @Test
    void removeDeliveredBeforeTheAddItObservedStillRemovesIt() {
        OrSet<String> source = new OrSet<>();
        OrSetOp.Add<String> add = source.prepareAdd("k", A1, 1, "v");
        source.apply(add);
        OrSetOp.Remove<String> remove = source.prepareRemove("k", B1).orElseThrow();
        OrSet<String> replica = new OrSet<>();
        replica.apply(remove);
        replica.apply(add);
        replica.apply(add);
        assertThat(replica.contains("k")).isFalse();
        assertThat(replica.isRemoved(A1)).isTrue();
    }

    @Test
    void storeSupersedesTheObservedVersion() {
        OrSet<String> set = new OrSet<>();
        set.apply(set.prepareAdd("k", A1, 5, "old"));
        OrSetOp.Add<String> replace = set.prepareAdd("k", A2, 3, "new");
        assertThat(replace.supersedes()).containsExactly(A1);
        set.apply(replace);
        assertThat(set.winner("k").orElseThrow().payload()).isEqualTo("new");
        assertThat(set.size()).isEqualTo(1);
    }

    @Test
    void removeAllIsChunked() {
        OrSet<String> set = new OrSet<>();
        for (int i = 1; i <= 5; i++) {
            set.apply(set.prepareAdd("k" + i, new Tag("a", 1, i), i, "v"));
        }
        long[] next = {100};
        List<OrSetOp.Remove<String>> removes = set.prepareRemoveAll(() -> new Tag("a", 1, next[0]++), 2);
        assertThat(removes).hasSize(3);
        removes.forEach(set::apply);
        assertThat(set.size()).isZero();
        assertThat(set.prepareRemoveAll(() -> B1, 2)).isEmpty();
        assertThat(set.prepareRemove("k1", B1)).isEmpty();
    }

    @Test
    void codecRoundTrips() {
        OrSetOp.Add<String> add = new OrSetOp.Add<>("key é", A2, 42, Set.of(A1, B1), null);
        byte[] mail = {1, 2, 3};
        OrSetOp<byte[]> decoded = OpCodec.decode(OpCodec.encodeAdd(add, mail), (tag, m) -> m);
        assertThat(decoded).isInstanceOfSatisfying(OrSetOp.Add.class, d -> {
            assertThat(d.key()).isEqualTo("key é");
            assertThat(d.tag()).isEqualTo(A2);
            assertThat(d.timestamp()).isEqualTo(42);
            assertThat(d.supersedes()).containsExactlyInAnyOrder(A1, B1);
            assertThat((byte[]) d.payload()).containsExactly(1, 2, 3);
        });
        assertThat(OpCodec.mailOf(OpCodec.encodeAdd(add, mail), A1)).isNull();
        OrSetOp.Remove<String> remove = new OrSetOp.Remove<>(B1, Set.of(A1, A2));
        assertThat(OpCodec.decode(OpCodec.encodeRemove(remove), (t, m) -> null)).isEqualTo(new OrSetOp.Remove<>(B1, Set.of(A1, A2)));
    }
}
