package org.jameskvs.app.cluster;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.inject.Inject;

import org.apache.james.task.Task;
import org.apache.james.task.TaskManager;
import org.apache.james.webadmin.Routes;
import org.apache.james.webadmin.tasks.TaskFromRequest;
import org.apache.james.webadmin.utils.ErrorResponder;
import org.apache.james.webadmin.utils.JsonTransformer;
import org.eclipse.jetty.http.HttpStatus;
import org.jameskvs.james.cluster.AdoptionView;
import org.jameskvs.james.cluster.ClusterWatch;
import org.jameskvs.james.cluster.PeerView;
import org.jameskvs.james.config.KvsSpoolConfiguration;

import spark.Request;
import spark.Response;
import spark.Service;

/**
 * Webadmin routes of the James cluster on the KVS ({@link ClusterWatch}), JSON as James's own routes:
 * <pre>
 * GET    /kvs/cluster                          this node (id, owner, namespace, fenced), its peers, its adoptions
 * GET    /kvs/cluster/nodes                    the other James nodes seen, with their lease (owner, epoch, seq,
 *                                              unrenewedMillis, expired, adoptedHere)
 * GET    /kvs/cluster/adoptions                the namespaces this node adopted (state, moved, queues, ...)
 * PUT    /kvs/cluster/adoptions/{namespace}    adopt a namespace now, whatever its lease says (its writer, if
 *                                              alive, is fenced): a James task ({@link AdoptNamespaceTask}), 201
 *                                              with its taskId; it fails if another node holds the claim; 400 at
 *                                              once for this node's own namespace
 * DELETE /kvs/cluster/adoptions/{namespace}    give an adopted namespace up: 204; 404 if not adopted here
 * </pre>
 * The claim takes two lease renewals (a few seconds): PUT answers with a task id at once, as James's
 * long operations do ({@code GET /tasks/{id}}, {@code /tasks/{id}/await}); the task ends with the claim,
 * moving the mail then runs in the background (follow it with GET adoptions, {@code moved} and {@code state}).
 */
public class KvsClusterRoutes implements Routes {
    public static final String BASE = "/kvs/cluster";

    private final ClusterWatch cluster;
    private final JsonTransformer json;
    private final TaskManager taskManager;

    @Inject
    public KvsClusterRoutes(ClusterWatch cluster, JsonTransformer json, TaskManager taskManager) {
        this.cluster = cluster;
        this.json = json;
        this.taskManager = taskManager;
    }

    @Override
    public String getBasePath() {
        return BASE;
    }

    @Override
    public void define(Service service) {
        service.get(BASE, (request, response) -> node(), json);
        service.get(BASE + "/nodes", (request, response) -> peers(), json);
        service.get(BASE + "/adoptions", (request, response) -> adoptions(), json);
        service.put(BASE + "/adoptions/:namespace", ((TaskFromRequest) this::adoptTask).asRoute(taskManager), json);
        service.delete(BASE + "/adoptions/:namespace", this::release);
    }

    private Map<String, Object> node() {
        KvsSpoolConfiguration configuration = cluster.configuration();
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("nodeId", configuration.nodeId());
        node.put("ownerName", configuration.ownerName());
        node.put("namespace", configuration.namespace());
        node.put("fenced", cluster.fenced());
        node.put("adoptionEnabled", configuration.adoptionEnabled());
        node.put("leaseTimeoutMillis", cluster.leaseTimeout().toMillis());
        node.put("nodes", peers());
        node.put("adoptions", adoptions());
        return node;
    }

    private List<Map<String, Object>> peers() {
        return cluster.peers().stream().map(KvsClusterRoutes::peer).toList();
    }

    private List<Map<String, Object>> adoptions() {
        return cluster.adoptions().stream().map(KvsClusterRoutes::adoption).toList();
    }

    /** The adopt task of the namespace the request names; refuses (400) what {@link ClusterWatch#adoptNow} would. */
    private Task adoptTask(Request request) {
        String namespace = namespace(request);
        try {
            cluster.checkAdoptable(namespace);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw ErrorResponder.builder().statusCode(HttpStatus.BAD_REQUEST_400).type(ErrorResponder.ErrorType.INVALID_ARGUMENT)
                .message(e.getMessage()).haltError();
        }
        return new AdoptNamespaceTask(cluster, namespace, Clock.systemUTC());
    }

    private Object release(Request request, Response response) throws Exception {
        String namespace = namespace(request);
        if (!cluster.release(namespace)) {
            throw ErrorResponder.builder().statusCode(HttpStatus.NOT_FOUND_404).type(ErrorResponder.ErrorType.NOT_FOUND)
                .message("namespace " + namespace + " is not adopted by this node").haltError();
        }
        response.status(HttpStatus.NO_CONTENT_204);
        return "";
    }

    private static String namespace(Request request) {
        String namespace = request.params("namespace");
        if (namespace == null || namespace.isBlank() || namespace.contains("/")) {
            throw ErrorResponder.builder().statusCode(HttpStatus.BAD_REQUEST_400).type(ErrorResponder.ErrorType.INVALID_ARGUMENT)
                .message("a namespace is one non-empty path segment").haltError();
        }
        return namespace;
    }

    private static Map<String, Object> peer(PeerView peer) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("namespace", peer.namespace());
        map.put("owner", peer.owner());
        map.put("epoch", peer.epoch());
        map.put("seq", peer.seq());
        map.put("unrenewedMillis", peer.unrenewedMillis());
        map.put("expired", peer.expired());
        map.put("adoptedHere", peer.adoptedHere());
        return map;
    }

    private static Map<String, Object> adoption(AdoptionView view) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("namespace", view.namespace());
        map.put("state", view.state());
        map.put("startedAt", view.startedAt().toString());
        map.put("drainedAt", view.drainedAt().map(Object::toString).orElse(null));
        map.put("moved", view.moved());
        map.put("queues", view.queues());
        map.put("endReason", view.endReason());
        return map;
    }
}
