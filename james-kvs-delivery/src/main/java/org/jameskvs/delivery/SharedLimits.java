package org.jameskvs.delivery;

/**
 * Where a lane's limits are counted: on this node only, or across every James node delivering the
 * same lanes ({@link KvsSharedLimits}). A connection to a lane's destination needs a {@link Slot};
 * a lane's message rate is shared out as {@link #rateShare()}.
 */
public interface SharedLimits extends AutoCloseable {

    /** One connection's right to exist; released when the connection is closed. */
    interface Slot {
        /** False once this node may have lost the slot (its KVS link broke): the connection must close. */
        boolean held();

        void release();
    }

    /**
     * A free slot of {@code lane} (at most {@code concurrency} slots per lane exist), or null when every
     * one is taken, here or on another node. May block for a round trip: called on an I/O thread.
     */
    Slot tryTake(Lane lane, int concurrency);

    /** The part of each lane's message rate this node may use (1 alone, 1/n among n live nodes). */
    double rateShare();

    /**
     * The part of {@code lane}'s message rate this node may use: by default {@link #rateShare()}; with
     * shares by demand, 1/n among the n live nodes that have mail for the lane ({@link #demand}).
     */
    default double rateShare(Lane lane) {
        return rateShare();
    }

    /**
     * This node has a mail of {@code lane} to send in {@code wait} (its place in the lane's pacing): the
     * lane has demand here until then. Called on the delivery path: must not block.
     */
    default void demand(Lane lane, java.time.Duration wait) {
    }

    @Override
    void close();

    /** Limits counted on this node only: every slot is granted (the lane's own bound applies), rate share 1. */
    static SharedLimits nodeLocal() {
        Slot slot = new Slot() {
            @Override
            public boolean held() {
                return true;
            }

            @Override
            public void release() {
            }
        };
        return new SharedLimits() {
            @Override
            public Slot tryTake(Lane lane, int concurrency) {
                return slot;
            }

            @Override
            public double rateShare() {
                return 1;
            }

            @Override
            public void close() {
            }
        };
    }
}
