package org.jameskvs.dockerrig;

import org.jameskvs.testkit.smtp.SmtpClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.BiFunction;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.ContainerState;
import org.testcontainers.containers.DockerComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.lifecycle.Startable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The whole docker rig (docker/docker-compose.yml) with Testcontainers: builds the images, brings the
 * rig up, sends mail through James's SMTP port and checks that each mail reaches the SMTP sink exactly
 * once, that the bounded load generator's mails arrive too, that the spool is the KVS server (kvs1's
 * PUT count), and that Prometheus scrapes every target and Grafana has the dashboard.
 *
 * <p>Where no Docker engine is available the test is reported as skipped ("disabledWithoutDocker"),
 * never as passed. It uses the built artifacts ({@code mvn -q install -DskipTests} first when run alone).
 */
@Testcontainers(disabledWithoutDocker = true)
class ComposeRigTest {
    private static final int OWN_MAILS = 20;
    private static final int LOAD_COUNT = 200;
    private static final String SINK_DUMP = "/var/spool/smtp-sink/mail.dump";
    private static final Duration DELIVERY_TIMEOUT = Duration.ofMinutes(3);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void mailThroughTheRigReachesTheSinkOnceAndIsMonitored() throws Exception {
        Path root = RigFiles.root();
        for (String artifact : new String[] {"kvs-server/target/kvs-server.jar", "kvs-server/target/lib", "james-kvs-app/target/james/lib"}) {
            assertThat(root.resolve(artifact)).as(artifact + ": run 'mvn -q install -DskipTests' first (the images copy it)").exists();
        }
        try (Rig rig = Rig.start(RigFiles.composeFile().toFile())) {
            String runId = UUID.randomUUID().toString().substring(0, 8);
            String smtpHost = rig.host("james", 2525);
            int smtpPort = rig.port("james", 2525);
            for (int i = 0; i < OWN_MAILS; i++) {
                try (SmtpClient client = SmtpClient.connect(smtpHost, smtpPort, 60_000)) {
                    int reply = client.send("rig-test@rig.test", "rig-test@example.com", SmtpClient.message("rig-test@rig.test",
                        "rig-test@example.com", "<rig-test-" + runId + "-" + i + "@rig.test>", "rig-test " + runId + " " + i));
                    assertThat(reply).as("reply to mail %d: %s", i, client.lastReply()).isEqualTo(250);
                }
            }

            // Every mail reaches the sink (James -> spool -> outgoing -> RemoteDelivery), exactly once.
            ContainerState sink = rig.container("sink")
                .orElseThrow(() -> new AssertionError("no container for the sink service"));
            await("our " + OWN_MAILS + " mails in the sink", () -> countInSink(sink, "^Subject: rig-test " + runId + " ") >= OWN_MAILS);
            await("the load generator's " + LOAD_COUNT + " mails in the sink", () -> countInSink(sink, "^Subject: rig load$") >= LOAD_COUNT);
            Thread.sleep(3_000); // a duplicate would come right after
            assertThat(countInSink(sink, "^Subject: rig-test " + runId + " ")).as("our mails, each once").isEqualTo(OWN_MAILS);
            assertThat(countInSink(sink, "^Subject: rig load$")).as("load generator's mails, each once").isEqualTo(LOAD_COUNT);

            // The spool is the KVS server: kvs1 (first of kvs-spool.properties servers) stored the mails.
            String kvsMetrics = get(rig, "kvs1", 9464, "/metrics");
            assertThat(metricValue(kvsMetrics, "kvs_requests_total{op=\"PUT\"}")).as("kvs1 PUT requests")
                .isGreaterThanOrEqualTo(OWN_MAILS + LOAD_COUNT);
            String mailQueues = get(rig, "james", 8000, "/mailQueues");
            assertThat(mailQueues).contains("spool", "outgoing");
            assertThat(get(rig, "james", 8000, "/metrics")).contains("mailQueueSize:spool");

            // Prometheus scrapes the three KVS nodes and James; Grafana has the provisioned dashboard.
            await("all Prometheus targets up", () -> {
                JsonNode targets = json.readTree(get(rig, "prometheus", 9090, "/api/v1/targets")).path("data").path("activeTargets");
                long up = 0;
                for (JsonNode t : targets) {
                    up += "up".equals(t.path("health").asText()) ? 1 : 0;
                }
                return targets.size() == 4 && up == 4;
            });
            JsonNode dashboard = json.readTree(get(rig, "grafana", 3000, "/api/dashboards/uid/james-kvs"));
            assertThat(dashboard.path("dashboard").path("title").asText()).isEqualTo("James KVS Spool");
        }
    }

    private long countInSink(ContainerState sink, String regex) throws Exception {
        // grep -c prints 0 (exit 1) when nothing matches; exit 2 before the first mail created the file.
        var result = sink.execInContainer("sh", "-c", "grep -c -E '" + regex + "' " + SINK_DUMP + " 2>/dev/null || true");
        String out = result.getStdout().trim();
        return out.isEmpty() ? 0 : Long.parseLong(out);
    }

    private String get(Rig rig, String service, int port, String path) throws IOException, InterruptedException {
        URI uri = URI.create("http://" + rig.host(service, port) + ":" + rig.port(service, port) + path);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET " + service + ":" + port + path + "\n" + response.body()).isEqualTo(200);
        return response.body();
    }

    private static double metricValue(String exposition, String series) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        throw new AssertionError("no " + series + " in\n" + exposition);
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        Instant deadline = Instant.now().plus(DELIVERY_TIMEOUT);
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                if (condition.call()) {
                    return;
                }
            } catch (Exception | AssertionError e) {
                last = e instanceof Exception ex ? ex : new RuntimeException(e);
            }
            Thread.sleep(1_000);
        }
        fail("timed out after " + DELIVERY_TIMEOUT + " waiting for " + what, last);
    }

    /**
     * The rig started with the compose tool at hand: "docker compose" (v2, ComposeContainer) or
     * "docker-compose" (v1, the Debian package bin/setup installs; DockerComposeContainer). Both run
     * locally: the build contexts lie outside docker/, which a containerised compose could not see.
     */
    private record Rig(Startable compose, BiFunction<String, Integer, String> hostOf,
                       BiFunction<String, Integer, Integer> portOf,
                       Function<String, Optional<ContainerState>> containerOf) implements AutoCloseable {

        /** Empty host ports: Docker picks free ones, so a rig already running on the host does not collide. */
        private static final Map<String, String> ENV = Map.of(
            "LOAD_COUNT", String.valueOf(LOAD_COUNT),
            "SMTP_PORT", "", "WEBADMIN_PORT", "", "PROMETHEUS_PORT", "", "GRAFANA_PORT", "");
        private static final Duration STARTUP = Duration.ofMinutes(5);

        static Rig start(File composeFile) {
            Rig rig;
            if (works("docker", "compose", "version")) {
                ComposeContainer c = new ComposeContainer(composeFile)
                    .withLocalCompose(true).withBuild(true).withPull(false).withEnv(ENV)
                    .withExposedService("james", 2525)
                    .withExposedService("james", 8000, Wait.forHttp("/healthcheck").forStatusCode(200).withStartupTimeout(STARTUP))
                    .withExposedService("kvs1", 9464, Wait.forHttp("/metrics").forStatusCode(200).withStartupTimeout(STARTUP))
                    .withExposedService("prometheus", 9090, Wait.forHttp("/-/ready").forStatusCode(200).withStartupTimeout(STARTUP))
                    .withExposedService("grafana", 3000, Wait.forHttp("/api/health").forStatusCode(200).withStartupTimeout(STARTUP));
                rig = new Rig(c, c::getServiceHost, c::getServicePort, c::getContainerByServiceName);
            } else if (works("docker-compose", "version")) {
                DockerComposeContainer<?> c = new DockerComposeContainer<>(composeFile);
                c.withLocalCompose(true);
                c.withBuild(true);
                c.withPull(false);
                c.withEnv(ENV);
                c.withExposedService("james", 2525);
                c.withExposedService("james", 8000, Wait.forHttp("/healthcheck").forStatusCode(200).withStartupTimeout(STARTUP));
                c.withExposedService("kvs1", 9464, Wait.forHttp("/metrics").forStatusCode(200).withStartupTimeout(STARTUP));
                c.withExposedService("prometheus", 9090, Wait.forHttp("/-/ready").forStatusCode(200).withStartupTimeout(STARTUP));
                c.withExposedService("grafana", 3000, Wait.forHttp("/api/health").forStatusCode(200).withStartupTimeout(STARTUP));
                rig = new Rig(c, c::getServiceHost, c::getServicePort, c::getContainerByServiceName);
            } else {
                throw new AssertionError("A Docker engine is available but neither 'docker compose' nor 'docker-compose' runs; "
                    + "bin/setup installs docker-compose");
            }
            rig.compose.start();
            return rig;
        }

        String host(String service, int port) {
            return hostOf.apply(service, port);
        }

        int port(String service, int port) {
            return portOf.apply(service, port);
        }

        Optional<ContainerState> container(String service) {
            return containerOf.apply(service);
        }

        @Override
        public void close() {
            compose.stop();   // docker compose down -v: removes the containers and this project's volumes
        }

        private static boolean works(String... command) {
            try {
                Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                return p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }
}
