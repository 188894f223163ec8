package org.jameskvs.james.queue;

import java.util.List;

/** What a test opened, closed after it in the reverse order of opening (a James node before its store). */
final class Closing {
    private Closing() {
    }

    static void inReverse(List<AutoCloseable> opened) throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }
}
