package org.jameskvs.delivery;

import java.time.Duration;
import java.util.List;

import javax.inject.Inject;

import org.apache.james.util.DurationParser;
import org.apache.james.webadmin.Routes;
import org.apache.james.webadmin.utils.ErrorResponder;
import org.apache.james.webadmin.utils.JsonTransformer;

import spark.Request;
import spark.Service;

/**
 * webadmin routes of the lanes (add {@code org.jameskvs.delivery.LaneRoutes} to {@code extensions.routes}
 * in webadmin.properties). Answers come from counters, never from reading mail.
 * <ul>
 * <li>{@code GET /lanes}: every lane ({@link LaneView}, JSON array)</li>
 * <li>{@code GET /lanes/{laneOrDomain}}: one lane, by lane name or by a recipient domain it carries; for a
 * tail domain (in a bucket) with a {@code domain} field: that domain's own queued, delayed and in-flight
 * counts on this James node ({@link TailDomainCounts})</li>
 * <li>{@code PUT /lanes/{laneOrDomain}/suspension?duration=10m}: suspend (no new connection) for that long:
 * the lane when a lane is named, else the domain (its dedicated lane, or only that domain in its bucket)</li>
 * <li>{@code DELETE /lanes/{laneOrDomain}/suspension}: resume now</li>
 * <li>{@code PUT /lanes/{laneOrDomain}/bounce?duration=1h}: bounce that lane's (or domain's) mail, queued or
 * arriving, instead of delivering it, for that long; {@code DELETE} cancels the order</li>
 * </ul>
 */
public class LaneRoutes implements Routes {
    public static final String BASE = "/lanes";

    /** Lane views built at once by {@code GET /lanes}. */
    private static final int PARALLEL_VIEWS = 16;
    private static final Duration VIEWS_TIMEOUT = Duration.ofMinutes(1);

    private final LaneRegistry registry;
    private final JsonTransformer json = new JsonTransformer();

    @Inject
    public LaneRoutes(LaneRegistry registry) {
        this.registry = registry;
    }

    @Override
    public String getBasePath() {
        return BASE;
    }

    @Override
    public void define(Service service) {
        service.get(BASE, (request, response) -> {
            response.type("application/json");
            return views(registry.lanes());
        }, json);
        service.get(BASE + "/:lane", (request, response) -> {
            response.type("application/json");
            LaneView view = LaneView.of(lane(request));
            return registry.tailDomain(request.params("lane")).map(view::withDomain).orElse(view);
        }, json);
        service.put(BASE + "/:lane/suspension", (request, response) -> {
            LaneState lane = lane(request);
            Duration duration = duration(request);
            rule(request).suspend(duration, "suspended by an administrator");
            response.type("application/json");
            return LaneView.of(lane);
        }, json);
        service.put(BASE + "/:lane/bounce", (request, response) -> {
            LaneState lane = lane(request);
            lane.bounces().order(bounceKey(request), duration(request));
            response.type("application/json");
            return LaneView.of(lane);
        }, json);
        service.delete(BASE + "/:lane/bounce", (request, response) -> {
            LaneState lane = lane(request);
            lane.bounces().cancel(bounceKey(request));
            response.type("application/json");
            return LaneView.of(lane);
        }, json);
        service.delete(BASE + "/:lane/suspension", (request, response) -> {
            LaneState lane = lane(request);
            rule(request).resume();
            response.type("application/json");
            return LaneView.of(lane);
        }, json);
    }

    /**
     * Every lane's view, in order. A view's {@code queued} is a STAT round trip to the KVS server, so
     * they are built PARALLEL_VIEWS at a time (on Reactor's bounded elastic threads): the answer takes
     * about lanes / PARALLEL_VIEWS round trips, not one per lane (964 lanes: median 107 ms one by one).
     */
    static List<LaneView> views(java.util.Collection<LaneState> lanes) {
        return reactor.core.publisher.Flux.fromIterable(lanes)
            .flatMapSequential(lane -> reactor.core.publisher.Mono.fromCallable(() -> LaneView.of(lane))
                .subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()), PARALLEL_VIEWS)
            .collectList()
            .block(VIEWS_TIMEOUT);
    }

    private LaneState lane(Request request) {
        String name = request.params("lane");
        return registry.find(name).orElseThrow(() -> ErrorResponder.builder()
            .statusCode(404).type(ErrorResponder.ErrorType.NOT_FOUND)
            .message("No lane named or carrying '%s' (lanes: %s)", name, laneNames()).haltError());
    }

    /** The bounce order's key: the whole lane when a lane is named, else the domain. */
    private String bounceKey(Request request) {
        String name = request.params("lane");
        return registry.lanes().stream().anyMatch(s -> s.lane().name().equals(name)) ? BounceOrders.WHOLE_LANE : name;
    }

    private SuspensionRule rule(Request request) {
        return registry.suspensionFor(request.params("lane")).orElseThrow();
    }

    private String laneNames() {
        List<String> names = registry.lanes().stream().map(s -> s.lane().name()).limit(20).toList();
        return String.join(", ", names) + (registry.lanes().size() > 20 ? ", ..." : "");
    }

    private static Duration duration(Request request) {
        String raw = request.queryParams("duration");
        try {
            if (raw == null) {
                throw new NumberFormatException("missing");
            }
            Duration duration = DurationParser.parse(raw);
            if (duration.isNegative() || duration.isZero()) {
                throw new NumberFormatException("not positive");
            }
            return duration;
        } catch (RuntimeException e) {
            throw ErrorResponder.builder().statusCode(400).type(ErrorResponder.ErrorType.INVALID_ARGUMENT)
                .message("'duration' must be a positive duration such as 600s or 10m, was '%s'", raw).haltError();
        }
    }
}
