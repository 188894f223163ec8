package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.ReservedIds;
import org.jameskvs.protocol.StoredMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Catches the {@link LocalReplica} up with every node's log: reads each copy incrementally (READ from
 * its last position) and applies what it finds; the records of the own log are also noted in the
 * {@link OwnLog}.
 *
 * <p><b>Order does not matter</b>: {@link OrSet} keeps removed tags, so operations commute and are
 * idempotent: reading the logs in any interleaving, reading copies whose positions differ, or
 * rescanning a log from 0 all converge. Positions are per copy: a copy is re-read from 0 when the
 * {@link ReadResult#positionSpace()} of its answers changes (the replicated copy serving the own
 * log's reads changed), and every log is re-read from 0 every {@code rescanInterval} (anti-entropy;
 * after a rebuild new messages may precede old ones). Such a re-read from 0 to the end of every copy
 * is a <i>full pass</i> ({@link FullPass}); at its end the {@link GarbageCollector} applies G4.
 */
final class LogReader {
    private static final int MAX_BLOCKS_PER_CATCH_UP = 1_000_000;
    // The repository's log category (as before this class was split out of it).
    private static final Logger LOG = LoggerFactory.getLogger(OrSetMailRepository.class);

    private final KvsSpoolConfiguration configuration;
    private final LocalReplica replica;
    private final OwnLog ownLog;
    private final NodeLogs logs;
    private final GarbageCollector garbage;
    private final Duration rescanInterval;

    LogReader(KvsSpoolConfiguration configuration, LocalReplica replica, OwnLog ownLog, NodeLogs logs,
              GarbageCollector garbage, Duration rescanInterval) {
        this.configuration = configuration;
        this.replica = replica;
        this.ownLog = ownLog;
        this.logs = logs;
        this.garbage = garbage;
        this.rescanInterval = rescanInterval;
    }

    /** Catches up with every known log; a full pass over those due a rescan, or over all if {@code fullPass}. */
    void catchUpAll(long now, boolean fullPass) {
        for (LogCursor cursor : logs.cursors()) {
            boolean rescan = fullPass || now - cursor.lastRescan >= rescanInterval.toNanos();
            if (rescan) {
                cursor.lastRescan = now;
            }
            try {
                catchUp(cursor, rescan);
            } catch (RuntimeException e) {
                LOG.warn("OR-set repository {}: cannot read {} (will retry)", ownLog.name(), cursor.name, e);
            }
        }
    }

    private void catchUp(LogCursor cursor, boolean fullPass) {
        if (cursor.own) {
            LogCursor.Copy copy = cursor.copies.computeIfAbsent(LogCopies.SINGLE, node -> new LogCursor.Copy(node, ownLog.handle()));
            copy.handle = ownLog.handle(); // the write handle of KvsQueues (re-opened after a takeover)
        }
        // Only the in-sync copies named by the newest record: a stale copy would bring removed mail back.
        logs.refreshMembers(cursor, fullPass);
        FullPass pass = null;
        if (fullPass) {
            pass = new FullPass(replica.liveTagsIn(cursor.name));
            for (LogCursor.Copy copy : cursor.copies.values()) {
                copy.position = 0;
            }
            if (!logs.complete(cursor)) {
                pass.clean = false; // G4 concludes from absence only over every in-sync copy
            }
        }
        RuntimeException failure = null;
        for (LogCursor.Copy copy : cursor.memberCopies()) {
            try {
                readToEnd(cursor, copy, pass);
            } catch (RuntimeException e) {
                failure = e;
                if (pass != null) {
                    pass.clean = false;
                }
            }
        }
        if (pass != null) {
            garbage.afterFullPass(cursor, pass);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void readToEnd(LogCursor cursor, LogCursor.Copy copy, FullPass pass) {
        for (int blocks = 0; blocks < MAX_BLOCKS_PER_CATCH_UP; blocks++) {
            ReadResult result = Futures.await(copy.handle.read(copy.position, configuration.readBlockSize(), configuration.readBlockBytes(), 0),
                configuration.requestTimeout(), "read " + cursor.name);
            if (!result.isOk()) {
                throw new IllegalStateException("READ failed on " + cursor.name + " (" + copy.node + "): " + result.status() + " " + result.reason());
            }
            if (result.positionSpace() != copy.space) {
                boolean first = copy.space == LogCursor.Copy.NO_SPACE;
                copy.space = result.positionSpace();
                if (!first && copy.position != 0) {
                    // Another copy serves the reads: positions are its own, read it again from 0.
                    copy.position = 0;
                    if (pass != null) {
                        pass.clean = false;
                    }
                    continue;
                }
            }
            List<OrSetOp<MailRef>> ops = new ArrayList<>(result.messages().size());
            for (StoredMessage message : result.messages()) {
                if (ReservedIds.isReserved(message.id())) {
                    continue;
                }
                try {
                    ops.add(OpCodec.decode(message.body(), (tag, mail) -> new MailRef(cursor.name, tag)));
                } catch (RuntimeException e) {
                    LOG.error("OR-set repository {}: skipping undecodable message at {} of {}", ownLog.name(), message.position(), cursor.name, e);
                }
            }
            replica.applyAll(ops);
            if (pass != null) {
                pass.saw(ops);
            }
            if (cursor.own) {
                ops.forEach(ownLog::noteRead);
            }
            copy.position = Math.max(copy.position, result.nextPosition());
            if (result.messages().isEmpty()) {
                return;
            }
        }
        throw new IllegalStateException("READ of " + cursor.name + " did not reach its end in " + MAX_BLOCKS_PER_CATCH_UP + " blocks");
    }
}
