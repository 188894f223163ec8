package org.jameskvs.server.net;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.metrics.ServerMetrics;
import org.jameskvs.server.storage.QueueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Group commit across connections. A connection that applied a block of requests has written its
 * responses without flushing and registers here; one task, run by the event loop after it has
 * processed all the reads of this loop iteration, commits the journal once (fsync when the policy
 * says so) and only then flushes every waiting connection. So no response leaves before the
 * journal commit that covers it, and N connections cost one commit, not N.
 *
 * <p>If the commit fails, the waiting connections are closed instead of flushed: their clients see
 * CONNECTION_LOST (outcome unknown) rather than an OK that the journal may not honour.
 */
final class GroupCommitter {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommitter.class);

    private final EventLoop loop;
    private final QueueStore store;
    private final ServerMetrics metrics;
    private final List<ChannelHandlerContext> waiting = new ArrayList<>();
    private final Runnable commitTask = this::commitAndFlush;
    private boolean scheduled;

    GroupCommitter(EventLoop loop, QueueStore store, ServerMetrics metrics) {
        this.loop = loop;
        this.store = store;
        this.metrics = metrics;
    }

    void flushAfterCommit(ChannelHandlerContext ctx) {
        waiting.add(ctx);
        if (!scheduled) {
            scheduled = true;
            loop.execute(commitTask);
        }
    }

    /** Runs on the event loop; also called directly at shutdown. */
    void commitAndFlush() {
        scheduled = false;
        long start = System.nanoTime();
        Status status = store.commit();
        metrics.commit(System.nanoTime() - start);
        if (status != Status.OK) {
            LOG.error("journal commit failed ({}): closing {} connection(s) without acknowledging", status,
                    waiting.size());
        }
        for (ChannelHandlerContext ctx : waiting) {
            if (status == Status.OK) {
                ctx.flush();
            } else {
                ctx.close();
            }
        }
        waiting.clear();
    }
}
