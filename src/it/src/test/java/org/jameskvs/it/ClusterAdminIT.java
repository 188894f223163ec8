package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The cluster's webadmin routes on two real James nodes ({@code org.jameskvs.app.cluster.KvsClusterRoutes}):
 * each lists the other with its live lease; after {@code kill -9} of james-a, james-b lists its
 * adoption of james-a's namespace with the mail it moved; an administrator releases it (204, then 404
 * for a second release), adopts it again by hand (a James task: 201 with its id, the task completes with
 * the namespace in its details, the adoption is listed again) and cannot adopt james-b's own namespace (400).
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

            List<String> accepted = pair.queueOnAWhileTheSinkHolds("admin-a", 2, MAILS, Duration.ofSeconds(120));
            // Killed only once every mail went from spool to outgoing: a mail killed between the two is in both
            // queues (the spooler had not deleted it yet) and moved twice, which the exact counts below exclude.
            awaitBody(pair.a, "/mailQueues/spool", "\"size\":0");
            pair.a.kill9();

            HttpResponse<String> adoptions = awaitBody(pair.b, "/kvs/cluster/adoptions", "\"state\":\"DRAINED\"");
            assertThat(adoptions.body()).contains("\"namespace\":\"james-a\"", "james-a/queue/outgoing@p5",
                "james-a/queue/spool@p5");
            Path exported = kvsAdminListsExportsAndImports(pair, accepted);

            assertThat(pair.b.webadminCall("DELETE", "/kvs/cluster/adoptions/james-a").statusCode()).isEqualTo(204);
            assertThat(pair.b.webadminCall("GET", "/kvs/cluster/adoptions").body()).contains("\"state\":\"ENDED\"",
                "released by hand");
            assertThat(pair.b.webadminCall("DELETE", "/kvs/cluster/adoptions/james-a").statusCode()).isEqualTo(404);

            HttpResponse<String> byHand = pair.b.webadminCall("PUT", "/kvs/cluster/adoptions/james-a");
            assertThat(byHand.statusCode()).as(byHand.body()).isEqualTo(201);
            String task = awaitTask(pair.b, taskId(byHand.body()));
            assertThat(task).contains("\"status\":\"completed\"", "\"type\":\"kvs-adopt-namespace\"",
                "\"namespace\":\"james-a\"").doesNotContain("ENDED");
            assertThat(pair.b.webadminCall("GET", "/kvs/cluster/adoptions").body())
                .containsPattern("\"namespace\":\"james-a\",\"state\":\"(CLAIMING|MOVING|DRAINED)\"");
            assertThat(pair.b.webadminCall("PUT", "/kvs/cluster/adoptions/james-b").statusCode()).isEqualTo(400);

            pair.sink.holdAll(false);
            Scenario.Result result = Scenario.account("cluster-admin", pair.sink, accepted, List.of(), "");
            assertThat(result.lost()).as(result.line()).isZero();
            assertThat(pair.b.errorRepositorySize()).isZero();

            // import --take-over into a queue james-b writes: kvs-admin fences james-b (a higher epoch) and
            // imports; james-b finds itself fenced (its next write of the queue answers STALE_EPOCH).
            Path conf = pair.directory.resolve("james-b/conf");
            assertThat(KvsAdminCli.run(0, conf, "import", "james-b/queue/outgoing@p5", exported.toString(), "--take-over"))
                .contains(MAILS + " mail(s) imported");
            awaitBody(pair.b, "/kvs/cluster", "\"fenced\":true");
            assertThat(KvsAdminCli.run(0, conf, "list", "james-b/queue/outgoing@p5")).contains("kvs-admin");
        }
    }

    /**
     * {@code bin/kvs-admin} (a process, with james-b's conf) while james-a's mail sits in james-b's
     * outgoing queue, the sink holding: the listing names the adopter as the lease owner of james-a's
     * queues and shows the 50 mails on two copies; export writes them as .eml files; import into a new
     * queue stores them all; import into a queue james-b writes is refused.
     */
    /** @return the folder the queue was exported to */
    private static Path kvsAdminListsExportsAndImports(JamesPair pair, List<String> accepted) throws Exception {
        Path conf = pair.directory.resolve("james-b/conf");
        String listing = KvsAdminCli.run(0, conf, "list", "james-");
        assertThat(listing).contains("james-a/queue/spool@p5", "adopted-by:james-b", "james-b/queue/outgoing@p5");
        // MSGS counts mail only (not the replication's own record), on both copies; each copy has a sequence.
        List<String> outgoingCopies = copies(listing, "james-b/queue/outgoing@p5");
        assertThat(outgoingCopies).as(listing).hasSize(2).allMatch(c -> c.endsWith(":SYNC"));
        List<String[]> onCopies = nodeRows(listing, "james-b/queue/outgoing@p5").stream()
            .filter(row -> outgoingCopies.contains(row[1] + ":SYNC")).toList();
        assertThat(onCopies).as(listing).hasSize(2).allSatisfy(row -> {
            assertThat(row[MSGS]).isEqualTo(String.valueOf(MAILS));
            assertThat(Long.parseLong(row[SEQ])).isGreaterThanOrEqualTo(MAILS);
        });

        Path exported = pair.directory.resolve("exported");
        assertThat(KvsAdminCli.run(0, conf, "export", "james-b/queue/outgoing@p5", exported.toString()))
            .contains(MAILS + " mail(s) exported");
        String all;
        try (Stream<Path> files = Files.list(exported)) {
            all = files.map(ClusterAdminIT::read).reduce("", String::concat);
        }
        assertThat(accepted).allSatisfy(id -> assertThat(all).contains(id));

        assertThat(KvsAdminCli.run(0, conf, "import", "restored/queue/outgoing@p5", exported.toString()))
            .contains(MAILS + " mail(s) imported");
        // Nobody writes the restored queue any more: both copies hold the same content (same seq and digest).
        String restoredListing = KvsAdminCli.run(0, conf, "list", "restored/");
        // (The import's write OPEN also left an empty queue on the third node: no copy, 0 mails.)
        List<String> restoredCopies = copies(restoredListing, "restored/queue/outgoing@p5");
        assertThat(restoredCopies).as(restoredListing).hasSize(2).allMatch(c -> c.endsWith(":SYNC"));
        List<String[]> restored = nodeRows(restoredListing, "restored/queue/outgoing@p5").stream()
            .filter(row -> restoredCopies.contains(row[1] + ":SYNC")).toList();
        assertThat(restored).as(restoredListing).hasSize(2).allSatisfy(row -> assertThat(row[MSGS]).isEqualTo(String.valueOf(MAILS)));
        assertThat(restored.get(0)[SEQ]).as(restoredListing).isEqualTo(restored.get(1)[SEQ]);
        assertThat(restored.get(0)[DIGEST]).as(restoredListing).isEqualTo(restored.get(1)[DIGEST]);
        assertThat(nodeRows(restoredListing, "restored/queue/outgoing@p5")).as(restoredListing)
            .filteredOn(row -> !restoredCopies.contains(row[1] + ":SYNC")).allSatisfy(row -> assertThat(row[MSGS]).isEqualTo("0"));

        // The management table of that queue: a SYNC row with the record per copy (the nodes the listing
        // names), any other node holding the queue marked as no copy.
        String table = KvsAdminCli.run(0, conf, "table", "restored/queue/outgoing@p5");
        List<String> tableRows = table.lines().filter(l -> l.startsWith("restored/queue/outgoing@p5 ")).toList();
        List<String> syncRows = tableRows.stream().filter(l -> l.contains(" SYNC ")).toList();
        assertThat(syncRows).as(table).hasSize(2).allSatisfy(l -> assertThat(l).contains("record v=", "owner kvs-admin"));
        assertThat(syncRows.stream().map(l -> l.split("\\s+")[1] + ":SYNC").toList())
            .containsExactlyInAnyOrderElementsOf(restoredCopies);
        assertThat(tableRows).as(table).filteredOn(l -> !syncRows.contains(l)).allSatisfy(l -> assertThat(l).contains("not a copy"));
        assertThat(KvsAdminCli.run(1, conf, "table", "no-such/queue")).contains("no KVS node holds no-such/queue");
        assertThat(KvsAdminCli.run(1, conf, "import", "james-b/queue/outgoing@p5", exported.toString()))
            .contains("QUEUE_LOCKED", "--take-over");
        return exported;
    }

    // Columns of kvs-admin list's per-node rows: QUEUE NODE MSGS BYTES OWNER EPOCH TXN SEQ DIGEST.
    private static final int MSGS = 2;
    private static final int SEQ = 7;
    private static final int DIGEST = 8;

    /** kvs-admin list's per-node rows of {@code queue}, split in columns (none holds a space). */
    private static List<String[]> nodeRows(String listing, String queue) {
        String header = "QUEUE    ";
        return listing.lines().takeWhile(l -> !l.isBlank()).filter(l -> l.startsWith(queue + " ") && !l.startsWith(header))
            .map(l -> l.split("\\s+")).filter(row -> row.length >= 9).toList();
    }

    /** The COPIES column (node:state ...) of kvs-admin list's lease section for {@code queue}. */
    private static List<String> copies(String listing, String queue) {
        List<String> lines = listing.lines().dropWhile(l -> !l.isBlank()).filter(l -> l.startsWith(queue + " ")).toList();
        assertThat(lines).as(listing).hasSize(1);
        String[] columns = lines.get(0).split("\\s+");
        return List.of(columns).subList(4, columns.length);
    }

    /** Polls {@code GET /tasks/{id}} until the task ended (bounded: 120 s); @return its JSON. */
    private static String awaitTask(JamesNode james, String taskId) throws Exception {
        Instant deadline = Instant.now().plusSeconds(120);
        String body = james.webadminCall("GET", "/tasks/" + taskId).body();
        while (body.matches("(?s).*\"status\":\"(waiting|inProgress)\".*") && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            body = james.webadminCall("GET", "/tasks/" + taskId).body();
        }
        return body;
    }

    private static String taskId(String body) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"taskId\":\"([^\"]+)\"").matcher(body);
        assertThat(m.find()).as(body).isTrue();
        return m.group(1);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
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
