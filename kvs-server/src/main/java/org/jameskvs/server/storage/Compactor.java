package org.jameskvs.server.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * Space reclamation. Journal files go strictly oldest first, which keeps replay simple: the files
 * left are always a suffix of the journal, so every DELETE/CLEAR record that matters is still
 * there after the PUT it kills. The oldest file goes as soon as no live message, no latest REPLACE
 * and no latest queue CREATE is located in it. When the oldest file is old enough and mostly dead,
 * its survivors are copied forward (COPY records, and a CREATE checkpoint for queue metadata): the
 * COPY is journaled, and the message's location moved, before the file is deleted, so an
 * acknowledged message never depends on a deleted file. The newest file is never deleted (the
 * appender may still be writing to it).
 */
final class Compactor {
    private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);

    private final Journal journal;
    private final Queues queues;
    private final JournalRecords records;
    private final JournalTuning tuning;

    Compactor(Journal journal, Queues queues, JournalRecords records, JournalTuning tuning) {
        this.journal = journal;
        this.queues = queues;
        this.records = records;
        this.tuning = tuning;
    }

    /** One bounded round of reclamation. @return files deleted */
    int run() throws JournalException, IOException {
        long budget = tuning.copyBudgetBytes();
        int deleted = 0;
        while (true) {
            CycleFile oldest = journal.oldest();
            if (oldest == null || oldest == journal.newest()) {
                return deleted;
            }
            if (oldest.liveRefs <= 0) {
                journal.delete(oldest);
                deleted++;
                continue;
            }
            long age = journal.time().currentTimeMillis() - journal.cycleEndMillis(oldest.cycle);
            if (age < tuning.compactMinAgeMillis()
                    || oldest.liveBytes > tuning.compactMaxLiveRatio() * Math.max(1, oldest.end)) {
                return deleted;
            }
            budget = copyForward(oldest, budget);
            if (budget <= 0) {
                return deleted;
            }
            if (oldest.liveRefs > 0) {
                LOG.warn("Journal file {} still has {} live references after copying forward", oldest.path,
                        oldest.liveRefs);
                return deleted;
            }
        }
    }

    private long copyForward(CycleFile f, long budget) throws JournalException, IOException {
        long copied = 0;
        for (StoredQueue q : queues.all()) {
            if (q.metaLocation != 0 && journal.file(q.metaLocation) == f) {
                long loc = records.create(q);
                queues.created(q.id, q.name, q.maxMessages, q.maxBytes, q.nextPosition, q.epoch, q.owner, q.txn, loc);
            }
            if (q.commitLocation != 0 && journal.file(q.commitLocation) == f) {
                queues.committed(q, q.committed, records.committed(q.id, q.txn, q.committed));
            }
            QueueIndex ix = q.index;
            for (int s = ix.head(); s < ix.tail(); s++) {
                if (!ix.isLive(s)) {
                    continue;
                }
                long state = ix.stateLocation(s);
                if (journal.file(ix.location(s)) == f || state != 0 && journal.file(state) == f) {
                    long loc = records.copy(q, s);
                    int length = records.lastCopyLength();
                    queues.copied(q, s, loc, length, ix.notBefore(s));
                    copied++;
                    budget -= length;
                    if (budget <= 0) {
                        LOG.info("Copied {} messages forward out of {} (budget used up)", copied, f.path.getFileName());
                        return budget;
                    }
                }
            }
        }
        if (copied > 0) {
            LOG.info("Copied {} messages forward out of {}", copied, f.path.getFileName());
        }
        return budget;
    }
}
