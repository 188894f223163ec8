package org.jameskvs.replication;

/** Network state of one path (paper Table I): RUN carries the traffic, READY is a healthy spare, NG failed. */
public enum NetState {
    RUN, READY, NG
}
