package org.jameskvs.server.storage;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.MappedBytesStore;
import net.openhft.chronicle.core.io.ReferenceOwner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The chunk of Chronicle's mapping that the journal writer writes to, as published to the
 * {@link JournalPageWarmer}: reserved while published, so it stays mapped while the warmer touches
 * it. Store thread only.
 */
final class PublishedMapping {
    private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
    private static final ReferenceOwner WARMER = ReferenceOwner.temporary("kvs-journal-warmer");
    private MappedBytesStore publishedStore;
    private WriterMapping publishedMapping;

    /** The mapping published last, or null. */
    WriterMapping current() {
        return publishedMapping;
    }

    /**
     * Store thread, as a block closes: notes the chunk of Chronicle's mapping the block went to and,
     * when it changed, reserves it for the warmer (so it stays mapped while published) and releases
     * the one published before.
     */
    void note(Bytes<?> bytes) {
        try {
            if (bytes.bytesStore() instanceof MappedBytesStore store && store != publishedStore) {
                store.reserve(WARMER);
                release();
                publishedStore = store;
                publishedMapping = new WriterMapping(store.addressForWrite(store.start()), store.start(),
                        store.safeLimit());
            }
        } catch (RuntimeException e) {
            LOG.debug("journal mapping not published to the page warmer: {}", e.toString());
        }
    }

    void release() {
        MappedBytesStore store = publishedStore;
        publishedStore = null;
        publishedMapping = null;
        if (store != null) {
            try {
                store.release(WARMER);
            } catch (RuntimeException e) {
                LOG.debug("journal mapping release: {}", e.toString());
            }
        }
    }
}
