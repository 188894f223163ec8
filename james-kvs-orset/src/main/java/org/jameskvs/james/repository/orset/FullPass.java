package org.jameskvs.james.repository.orset;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A full pass over a log: every copy re-read from 0 to its end. Records what G4 of the
 * {@link GarbageCollector} needs: the tags live from the log at the start, the ADDs the pass saw,
 * and whether it stayed clean (no error, no change of position space).
 */
final class FullPass {
    final Set<Tag> liveAtStart;
    final Set<Tag> seen = new HashSet<>();
    boolean clean = true;

    FullPass(Set<Tag> liveAtStart) {
        this.liveAtStart = liveAtStart;
    }

    void saw(List<OrSetOp<MailRef>> ops) {
        for (OrSetOp<MailRef> op : ops) {
            if (op instanceof OrSetOp.Add<MailRef> add) {
                seen.add(add.tag());
            }
        }
    }

    /** The tags live at the start whose ADD the pass did not see. */
    Set<Tag> unseen() {
        Set<Tag> unseen = new HashSet<>(liveAtStart);
        unseen.removeAll(seen);
        return unseen;
    }
}
