package org.jameskvs.server.storage;

import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.buf;
import static org.jameskvs.server.storage.StoreTestSupport.get;
import static org.jameskvs.server.storage.StoreTestSupport.id;
import static org.jameskvs.server.storage.StoreTestSupport.put;
import static org.jameskvs.server.storage.StoreTestSupport.read;
import static org.jameskvs.server.storage.StoreTestSupport.str;

/** PUT with replace-existing: one record, one transaction, old-or-new after any restart. */
class ReplacingPutTest {
    @TempDir
    Path dir;

    @Test
    void replacingPutSwapsTheMessageAtomicallyAndSurvivesRestart() {
        long txnAfter;
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir))) {
            QueueState q = store.create("repo", 0, 0);
            put(store, q, "a", "v1");
            put(store, q, "b", "other");
            assertThat(store.put(q, id("a"), 5, 0, buf(""), buf("v2"))).isEqualTo(Status.DUPLICATE_ID);
            long txnBefore = q.txn();
            assertThat(store.put(q, id("a"), 5, 0, buf("s"), buf("version-2"), true)).isEqualTo(Status.OK);
            assertThat(q.txn()).isEqualTo(txnBefore + 1);
            assertThat(q.size()).isEqualTo(2);
            assertThat(q.bytes()).isEqualTo("version-2".length() + "other".length());
            assertThat(str(get(store, q, "a").body())).isEqualTo("version-2");
            // The new version moved to the tail.
            assertThat(read(store, q, 0, 10, 0, 0).ids()).containsExactly("b", "a");
            // Replacing an absent id is a plain put.
            assertThat(store.put(q, id("c"), 5, 0, buf(""), buf("new"), true)).isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
            txnAfter = q.txn();
        }
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir))) {
            QueueState q = store.queue("repo");
            assertThat(q.size()).isEqualTo(3);
            assertThat(q.txn()).isEqualTo(txnAfter);
            assertThat(str(get(store, q, "a").body())).isEqualTo("version-2");
            assertThat(read(store, q, 0, 10, 0, 0).ids()).containsExactly("b", "a", "c");
        }
    }

    @Test
    void queueLimitsCountTheReplacedVersionOut() {
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir))) {
            QueueState q = store.create("tiny", 1, 10);
            put(store, q, "a", "12345");
            assertThat(store.put(q, id("a"), 5, 0, buf(""), buf("1234567890"), true)).isEqualTo(Status.OK);
            assertThat(store.put(q, id("a"), 5, 0, buf(""), buf("12345678901"), true)).isEqualTo(Status.QUEUE_FULL);
            assertThat(store.put(q, id("b"), 5, 0, buf(""), buf("1"), true)).isEqualTo(Status.QUEUE_FULL);
        }
    }
}
