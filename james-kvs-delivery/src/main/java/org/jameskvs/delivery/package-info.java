/**
 * Destination-aware outgoing delivery (issue 13): the {@link org.jameskvs.delivery.LaneDelivery} mailet
 * in place of RemoteDelivery.
 *
 * <p>How mail flows: {@link org.jameskvs.delivery.LaneSpool} splits an outgoing mail per recipient domain
 * and stores each part in its domain's lane queue ({@link org.jameskvs.delivery.LaneRouter}: a dedicated
 * queue for a configured busy domain, else one of the hashed buckets; James's queue factory makes them
 * KVS queues). One {@link org.jameskvs.delivery.LaneWorker} per lane takes mail from its queue and sends
 * it over {@link org.jameskvs.delivery.SmtpSession}s kept in {@link org.jameskvs.delivery.LaneConnections}
 * (reuse, at most the lane's concurrency), paced by {@link org.jameskvs.delivery.RatePacer}, its
 * concurrency adapted by {@link org.jameskvs.delivery.AdaptiveLimit}; with {@code sharedLimits} each
 * connection holds a slot of {@link org.jameskvs.delivery.KvsSharedLimits} (a KVS write lock), so a
 * lane's limits hold across James nodes, and a lane's rate is shared among the nodes that have mail for
 * it (demand locks). With {@code mxGrouping} tail domains are bucketed by their
 * best MX host ({@link org.jameskvs.delivery.MxGroups}). Sessions pipeline where the server offers it.
 * A mail leaves its lane queue only after the remote 250, or after its refused recipients were stored
 * elsewhere first: in a {@link org.jameskvs.delivery.DelayTiers} queue for a retry, or on James's
 * bounce path.
 *
 * <p>Control: {@link org.jameskvs.delivery.SuspensionRule} suspends a lane (or a tail domain of a bucket)
 * after repeated 421 replies or connect/greeting failures; {@link org.jameskvs.delivery.ReplyRule}s match
 * replies by code, enhanced code and text and, at their threshold, suspend the destination, order its
 * mail bounced, or throttle its lane; {@link org.jameskvs.delivery.BounceOrders} are an administrator's
 * (or such a rule's) bounce orders. {@link org.jameskvs.delivery.LaneRoutes} (webadmin {@code /lanes})
 * shows {@link org.jameskvs.delivery.LaneView}s built from counters and takes suspensions and bounce
 * orders; {@link org.jameskvs.delivery.LaneMetrics} exports the counters. Every setting is in
 * {@link org.jameskvs.delivery.LaneDeliveryConfig}.
 */
package org.jameskvs.delivery;
