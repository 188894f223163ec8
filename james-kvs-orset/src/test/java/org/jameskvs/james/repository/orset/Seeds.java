package org.jameskvs.james.repository.orset;

import java.util.function.LongConsumer;

/**
 * The seeds a property test runs: 1 to {@code -D<countProperty>} (default {@code defaultCount}), or the
 * one {@code -D<oneProperty>} names; a failing seed is named in the error, with how to rerun it alone.
 */
final class Seeds {
    private Seeds() {
    }

    /** Runs {@code property} once per seed; @return how many seeds ran. */
    static long runAll(String what, String countProperty, int defaultCount, String oneProperty, LongConsumer property) {
        Long only = Long.getLong(oneProperty);
        long first = only != null ? only : 1;
        long last = only != null ? only : Integer.getInteger(countProperty, defaultCount);
        for (long seed = first; seed <= last; seed++) {
            try {
                property.accept(seed);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(what + " failed for seed " + seed + " (rerun with -D" + oneProperty + "=" + seed + "): "
                    + e.getMessage(), e);
            }
        }
        return last - first + 1;
    }
}
