package org.jameskvs.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One benchmark invocation's store+delete transactions on a {@link StoreDeleteTarget}: {@value #SIZE}
 * ids and one body of 'x's, checked so that a target that fails transactions fails the run
 * instead of measuring less work.
 */
public final class StoreDeleteBatch implements AutoCloseable {
    /** Transactions per invocation, in flight together. */
    public static final int SIZE = 1000;

    private final String target;
    private final StoreDeleteTarget system;
    private final byte[] body;
    private final byte[][] ids = new byte[SIZE][];

    /** Starts the target named {@code target} ({@link StoreDeleteTarget#create}); bodies of {@code size} bytes. */
    public StoreDeleteBatch(String target, int size) throws Exception {
        this.target = target;
        this.system = StoreDeleteTarget.create(target);
        this.body = new byte[size];
        Arrays.fill(body, (byte) 'x');
    }

    /** Sets the id of transaction {@code i} of the next {@link #run()}s. */
    public void id(int i, String id) {
        ids[i] = id.getBytes(StandardCharsets.UTF_8);
    }

    /** Runs the {@value #SIZE} transactions; throws unless every one succeeded. */
    public int run() throws Exception {
        int ok = system.storeDeleteBatch(ids, body);
        if (ok != SIZE) {
            throw new IllegalStateException(target + ": only " + ok + " of " + SIZE + " transactions succeeded");
        }
        return ok;
    }

    @Override
    public void close() throws Exception {
        system.close();
    }
}
