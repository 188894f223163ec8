package org.jameskvs.server.net;

import org.jameskvs.protocol.OpenMode;
import org.jameskvs.server.storage.QueueState;

/** What a connection holds after OPEN: the queue, how it was opened, and the epoch it was opened with. */
record QueueHandle(QueueState queue, OpenMode mode, long epoch) {
}
