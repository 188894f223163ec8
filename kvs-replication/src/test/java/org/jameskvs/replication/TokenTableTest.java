package org.jameskvs.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The ring-with-overflow table agrees with a plain map under in-order, late, stuck and jumping tokens. */
class TokenTableTest {

    @Test
    void agreesWithAMapUnderRandomTraffic() {
        for (int seed = 0; seed < 50; seed++) {
            Random rnd = new Random(seed);
            TokenTable<Long> table = new TokenTable<>();
            Map<Long, Long> model = new HashMap<>();
            List<Long> live = new ArrayList<>();
            long next = rnd.nextInt(1 << 20);
            for (int step = 0; step < 50_000; step++) {
                int what = rnd.nextInt(100);
                if (what < 50) { // issue the next token (sometimes register an old one late)
                    long t = rnd.nextInt(100) < 2 && next > 10 ? next - 1 - rnd.nextInt(10) : next++;
                    if (!model.containsKey(t)) {
                        table.put(t, t * 3);
                        model.put(t, t * 3);
                        live.add(t);
                    }
                } else if (what < 97 && !live.isEmpty()) { // answer: mostly the oldest, sometimes any
                    int i = rnd.nextInt(100) < 80 ? 0 : rnd.nextInt(live.size());
                    long t = live.remove(i);
                    assertThat(table.remove(t)).isEqualTo(model.remove(t));
                } else if (what < 98) { // a jump far ahead (a long idle period)
                    next += rnd.nextInt(3) == 0 ? 1_000_000 : 5_000;
                } else { // an unknown or already answered token
                    long t = next - rnd.nextInt(20_000) - 1;
                    assertThat(table.remove(t)).isEqualTo(model.remove(t));
                    live.remove(t);
                }
                assertThat(table.size()).isEqualTo(model.size());
            }
            for (long t : live) {
                assertThat(table.remove(t)).isEqualTo(t * 3);
            }
            assertThat(table.size()).isZero();
        }
    }

    @Test
    void aStuckTokenDoesNotPinTheWindow() {
        TokenTable<String> table = new TokenTable<>();
        table.put(0, "stuck");
        for (long t = 1; t < 3_000_000; t++) {
            table.put(t, "x");
            assertThat(table.remove(t)).isEqualTo("x");
        }
        assertThat(table.size()).isEqualTo(1);
        assertThat(table.remove(0)).isEqualTo("stuck");
        assertThat(table.remove(0)).isNull();
    }
}
