package org.jameskvs.server.storage;

import org.jameskvs.protocol.ContentDigest;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/**
 * One definition of the digest: what the store folds (live, from the request's buffers) is what a
 * writer computes with kvs-protocol's {@link ContentDigest} from the mutation's arrays (the
 * replication's catch-up compares a returning copy against that), for every kind of mutation and a
 * refusal; plus one golden value, so that a change of the function cannot go unnoticed by either side.
 */
class ContentDigestGoldenTest {
    @TempDir
    Path dir;

    @Test
    void theStoreAndTheWriterComputeTheSameDigest() {
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir).withMinFreeDiskBytes(0))) {
            QueueState q = store.create("q", 0, 0);
            long d = q.digest();
            long seq = q.lastSeq();
            byte[] body = "a body".getBytes(StandardCharsets.UTF_8);
            byte[] state = "s-1".getBytes(StandardCharsets.UTF_8);
            assertThat(store.put(q, id("m1"), 3, 77, buf(state), buf(body))).isEqualTo(Status.OK);
            d = ContentDigest.next(d, ++seq, ContentDigest.PUT, ContentDigest.crc(id("m1")),
                    ContentDigest.contentCrc(3, 77, state, body));
            assertThat(q.digest()).as("PUT").isEqualTo(d);

            byte[] newState = "s-2".getBytes(StandardCharsets.UTF_8);
            assertThat(store.replace(q, id("m1"), 5, 99, buf(newState))).isEqualTo(Status.OK);
            d = ContentDigest.next(d, ++seq, ContentDigest.REPLACE, ContentDigest.crc(id("m1")),
                    ContentDigest.contentCrc(5, 99, newState, null));
            assertThat(q.digest()).as("REPLACE").isEqualTo(d);

            assertThat(store.delete(q, id("m1"))).isEqualTo(Status.OK);
            d = ContentDigest.next(d, ++seq, ContentDigest.DELETE, ContentDigest.crc(id("m1")), 0);
            assertThat(q.digest()).as("DELETE").isEqualTo(d);

            assertThat(store.skip(q, Opcode.DELETE, Status.NOT_FOUND)).isEqualTo(Status.OK);
            d = ContentDigest.refused(d, ++seq, ContentDigest.DELETE, Status.NOT_FOUND);
            assertThat(q.digest()).as("a refused DELETE").isEqualTo(d);

            assertThat(store.clear(q)).isEqualTo(Status.OK);
            d = ContentDigest.next(d, ++seq, ContentDigest.CLEAR, 0, 0);
            assertThat(q.digest()).as("CLEAR").isEqualTo(d);
            assertThat(q.lastSeq()).isEqualTo(seq);
        }
    }

    @Test
    void goldenValue() {
        long d = ContentDigest.next(0, 1, ContentDigest.PUT, ContentDigest.crc(id("m1")),
                ContentDigest.contentCrc(1, 0, new byte[0], "x".getBytes(StandardCharsets.UTF_8)));
        assertThat(ContentDigest.contentCrc(1, 0, buf(new byte[0]), buf("x")))
                .isEqualTo(ContentDigest.contentCrc(1, 0, new byte[0], "x".getBytes(StandardCharsets.UTF_8)));
        assertThat(Long.toHexString(d)).isEqualTo(Long.toHexString(GOLDEN));
    }

    /** Computed by the function as it was before it moved to kvs-protocol (then QueueDigest.next). */
    private static final long GOLDEN = 0x04b71501458512f7L;
}
