package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The cluster's webadmin routes on two real James nodes ({@code org.jameskvs.app.cluster.KvsClusterRoutes}):
 * each lists the other with its live lease; after {@code kill -9} of james-a, james-b lists its
 * adoption of james-a's namespace with the mail it moved; an administrator releases it (204, then 404
 * for a second release), adopts it again by hand (200) and cannot adopt james-b's own namespace (400).
 */
class ClusterAdminIT {
    private static final int MAILS = 50;

    @Test
    void nodesLeasesAndAdoptionsAreListedAndAdoptionsAreManagedByHand() throws Exception {
        try (JamesPair pair = JamesPair.start("cluster-admin")) {
            HttpResponse<String> nodeB = awaitBody(pair.b, "/kvs/cluster", "\"namespace\":\"james-a\"");
            assertThat(nodeB.statusCode()).isEqualTo(200);
            assertThat(nodeB.body()).contains("\"nodeId\":\"james-b\"", "\"fenced\":false", "\"owner\":\"james-a\"",
                "\"expired\":false");
            assertThat(awaitBody(pair.a, "/kvs/cluster/nodes", "\"namespace\":\"james-b\"").body()).contains("\"adoptedHere\":false");

            pair.sink.holdAll(true);
            TrackingLoad load = new TrackingLoad("admin-a", pair.a.smtpPort(), 2, MAILS, 0, 60_000).start();
            load.awaitDone(Duration.ofSeconds(120));
            List<String> accepted = load.ids(TrackingLoad.Outcome.ACCEPTED);
            assertThat(accepted).as(load.summary()).hasSize(MAILS);
            pair.a.kill9();

            HttpResponse<String> adoptions = awaitBody(pair.b, "/kvs/cluster/adoptions", "\"state\":\"DRAINED\"");
            assertThat(adoptions.body()).contains("\"namespace\":\"james-a\"", "james-a/queue/outgoing@p5",
                "james-a/queue/spool@p5");
            assertThat(pair.b.webadminCall("DELETE", "/kvs/cluster/adoptions/james-a").statusCode()).isEqualTo(204);
            assertThat(pair.b.webadminCall("GET", "/kvs/cluster/adoptions").body()).contains("\"state\":\"ENDED\"",
                "released by hand");
            assertThat(pair.b.webadminCall("DELETE", "/kvs/cluster/adoptions/james-a").statusCode()).isEqualTo(404);

            HttpResponse<String> byHand = pair.b.webadminCall("PUT", "/kvs/cluster/adoptions/james-a");
            assertThat(byHand.statusCode()).as(byHand.body()).isEqualTo(200);
            assertThat(byHand.body()).contains("\"namespace\":\"james-a\"").doesNotContain("ENDED");
            assertThat(pair.b.webadminCall("PUT", "/kvs/cluster/adoptions/james-b").statusCode()).isEqualTo(400);

            pair.sink.holdAll(false);
            Scenario.Result result = Scenario.account("cluster-admin", pair.sink, accepted, List.of(), "");
            assertThat(result.lost()).as(result.line()).isZero();
            assertThat(pair.b.errorRepositorySize()).isZero();
        }
    }

    /** GETs {@code path} until its body contains {@code text} (bounded: lease timeout + 60 s). */
    private static HttpResponse<String> awaitBody(JamesNode james, String path, String text) throws Exception {
        Instant deadline = Instant.now().plusMillis(JamesPair.LEASE_TIMEOUT_MILLIS).plusSeconds(60);
        HttpResponse<String> response = james.webadminCall("GET", path);
        while (!(response.statusCode() == 200 && response.body().contains(text)) && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            response = james.webadminCall("GET", path);
        }
        assertThat(response.body()).as("GET %s", path).contains(text);
        return response;
    }
}
