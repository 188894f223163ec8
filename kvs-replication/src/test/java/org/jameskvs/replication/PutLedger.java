package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.protocol.Status;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every put a test issued, per queue in issue order, and its outcome; and the check of what a copy
 * or a reader holds against it, printed as "acknowledged N, lost L, duplicated D". Ids are unique
 * across queues.
 */
final class PutLedger {
    /** Per queue, the ids in the order their puts were issued (one issuing thread per queue). */
    private final Map<String, List<String>> issued = new ConcurrentHashMap<>();
    /** Per id, its place in its queue's issue order. */
    private final Map<String, Integer> issueIndex = new ConcurrentHashMap<>();
    private final Map<String, Ack> outcomes = new ConcurrentHashMap<>();

    void issued(String queue, String id) {
        List<String> ids = issued.computeIfAbsent(queue, q -> new ArrayList<>());
        synchronized (ids) {
            issueIndex.put(id, ids.size());
            ids.add(id);
        }
    }

    void outcome(String id, Ack ack) {
        outcomes.put(id, ack);
    }

    /** Puts issued and still without an outcome. */
    long pending() {
        return issueIndex.size() - outcomes.size();
    }

    long acknowledged(String queue) {
        return ids(queue).stream().filter(this::acked).count();
    }

    private boolean acked(String id) {
        Ack a = outcomes.get(id);
        return a != null && a.isOk();
    }

    /** The ids issued to {@code queue}, in issue order. */
    List<String> ids(String queue) {
        List<String> ids = issued.getOrDefault(queue, List.of());
        synchronized (ids) {
            return List.copyOf(ids);
        }
    }

    /** Non-OK outcomes by status (with one reason each), over every queue. */
    Map<Status, String> failures() {
        Map<Status, Long> count = new TreeMap<>();
        Map<Status, String> reason = new HashMap<>();
        outcomes.values().stream().filter(a -> !a.isOk()).forEach(a -> {
            count.merge(a.status(), 1L, Long::sum);
            reason.putIfAbsent(a.status(), a.reason());
        });
        Map<Status, String> out = new TreeMap<>();
        count.forEach((s, n) -> out.put(s, n + " (e.g. " + reason.get(s) + ")"));
        return out;
    }

    /**
     * What {@code seen} (the ids a copy or a reader holds, in the order it holds them) says about the
     * puts into {@code queue}; printed with {@code where}.
     */
    Check check(String where, String queue, List<String> seen) {
        Map<String, Integer> times = new HashMap<>();
        for (String id : seen) {
            times.merge(id, 1, Integer::sum);
        }
        List<String> ids = ids(queue);
        long acknowledged = 0;
        long lost = 0;
        List<String> lostSample = new ArrayList<>();
        Map<Status, Long> failedButStored = new TreeMap<>();
        long unanswered = 0;
        for (String id : ids) {
            Ack a = outcomes.get(id);
            boolean present = times.containsKey(id);
            if (a == null) {
                unanswered++;
            } else if (a.isOk()) {
                acknowledged++;
                if (!present) {
                    lost++;
                    if (lostSample.size() < 5) {
                        lostSample.add(id);
                    }
                }
            } else if (present) {
                failedButStored.merge(a.status(), 1L, Long::sum);
            }
        }
        long duplicated = times.values().stream().filter(n -> n > 1).count();
        long strangers = times.keySet().stream().filter(id -> !issueIndex.containsKey(id)).count();
        // FIFO: acknowledged puts appear in the order they were issued.
        long orderBreaks = 0;
        String firstBreak = null;
        int last = -1;
        String lastId = null;
        for (String id : seen) {
            Integer at = issueIndex.get(id);
            if (at == null || !acked(id)) {
                continue;
            }
            if (at < last) {
                orderBreaks++;
                if (firstBreak == null) {
                    firstBreak = id + " after " + lastId;
                }
            }
            if (at > last) {
                last = at;
                lastId = id;
            }
        }
        Check c = new Check(where, queue, acknowledged, lost, duplicated, failedButStored, orderBreaks, unanswered,
                strangers);
        System.out.printf("%s, %s: acknowledged %d, lost %d, duplicated %d%s%s%s%s%s%n", where, queue, acknowledged,
                lost, duplicated, lost > 0 ? " " + lostSample : "",
                failedButStored.isEmpty() ? "" : "; failed but stored " + failedButStored,
                orderBreaks == 0 ? "" : "; order breaks " + orderBreaks + " (first: " + firstBreak + ")",
                unanswered == 0 ? "" : "; without outcome " + unanswered,
                strangers == 0 ? "" : "; ids never put " + strangers);
        return c;
    }

    /**
     * @param failedButStored puts whose outcome was a failure, found stored, by status (a TIMEOUT
     *                        here is an applied put the writer was told may not be)
     * @param orderBreaks     acknowledged ids seen before one issued earlier (FIFO broken)
     */
    record Check(String where, String queue, long acknowledged, long lost, long duplicated,
                 Map<Status, Long> failedButStored, long orderBreaks, long unanswered, long strangers) {
    }
}
