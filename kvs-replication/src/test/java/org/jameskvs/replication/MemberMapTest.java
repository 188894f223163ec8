package org.jameskvs.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The inline-slot map and set behave like LinkedHashMap / LinkedHashSet (identity keys, insertion order). */
class MemberMapTest {
    private final List<Member> members = new ArrayList<>();

    MemberMapTest() {
        for (int i = 0; i < 5; i++) {
            members.add(new Member("kvs" + i, SyncState.SYNC, NodePath.ACTIVE));
        }
    }

    @Test
    void mapAgreesWithALinkedHashMap() {
        Random rnd = new Random(7);
        for (int round = 0; round < 2_000; round++) {
            MemberMap<Integer> map = new MemberMap<>();
            Map<Member, Integer> model = new LinkedHashMap<>();
            for (int step = 0; step < 30; step++) {
                Member m = members.get(rnd.nextInt(members.size()));
                switch (rnd.nextInt(5)) {
                    case 0, 1 -> assertThat(map.put(m, step)).isEqualTo(model.put(m, step));
                    case 2 -> assertThat(map.remove(m)).isEqualTo(model.remove(m));
                    case 3 -> {
                        Iterator<Map.Entry<Member, Integer>> it = map.entrySet().iterator();
                        Iterator<Map.Entry<Member, Integer>> mit = model.entrySet().iterator();
                        while (it.hasNext()) {
                            Map.Entry<Member, Integer> e = it.next();
                            assertThat(e.getKey()).isSameAs(mit.next().getKey());
                            if (e.getKey() == m) {
                                it.remove();
                                mit.remove();
                            }
                        }
                    }
                    default -> assertThat(map.get(m)).isEqualTo(model.get(m));
                }
                assertThat(map).containsExactlyEntriesOf(model);
                assertThat(map.size()).isEqualTo(model.size());
                for (int i = 0; i < map.size(); i++) {
                    assertThat(map.keyAt(i)).isSameAs(new ArrayList<>(model.keySet()).get(i));
                    assertThat(map.valueAt(i)).isEqualTo(new ArrayList<>(model.values()).get(i));
                }
            }
        }
    }

    @Test
    void setAgreesWithALinkedHashSet() {
        Random rnd = new Random(11);
        for (int round = 0; round < 2_000; round++) {
            Set<Member> set = MemberMap.newSet();
            Set<Member> model = new LinkedHashSet<>();
            for (int step = 0; step < 30; step++) {
                Member m = members.get(rnd.nextInt(members.size()));
                switch (rnd.nextInt(4)) {
                    case 0, 1 -> assertThat(set.add(m)).isEqualTo(model.add(m));
                    case 2 -> assertThat(set.remove(m)).isEqualTo(model.remove(m));
                    default -> assertThat(set.contains(m)).isEqualTo(model.contains(m));
                }
                assertThat(set).containsExactlyElementsOf(model);
                assertThat(set.isEmpty()).isEqualTo(model.isEmpty());
            }
            set.clear();
            assertThat(set).isEmpty();
        }
    }
}
