package org.jameskvs.replication;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

import org.jameskvs.protocol.ReservedIds;

/** Message ids as map keys, and the id reserved for the replication's own record. */
final class Ids {
    /**
     * Id of the membership-and-lease record kept inside every replicated queue. It starts with a
     * zero byte, which mail ids never do, and is hidden from READ results and STAT sizes.
     */
    static final byte[] RECORD_ID = {0, 'r', 'e', 'p', 'l'};

    private Ids() {
    }

    static boolean isReserved(byte[] id) {
        return ReservedIds.isReserved(id);
    }

    static String key(byte[] id) {
        return HexFormat.of().formatHex(id);
    }

    static String show(byte[] id) {
        return isReserved(id) ? "<record>" : new String(id, StandardCharsets.UTF_8);
    }

    static boolean same(byte[] a, byte[] b) {
        return Arrays.equals(a, b);
    }
}
