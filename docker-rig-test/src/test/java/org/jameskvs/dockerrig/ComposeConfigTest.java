package org.jameskvs.dockerrig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jameskvs.testkit.ExternalTool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Checks of the docker rig that need no Docker engine, so they always run: the compose file is valid
 * for docker-compose (a prerequisite installed by bin/setup), every file it refers to exists, the
 * Grafana dashboard and provisioning and prometheus.yml parse and point at the rig's services, the
 * ports the rig assumes are those of conf/ and james-conf/, and docker/james/entrypoint.sh still finds
 * in james-conf/ every element it overrides.
 */
class ComposeConfigTest {
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(120);

    private final Path root = RigFiles.root();
    private final Path docker = root.resolve("docker");

    @Test
    void composeFileIsValidForDockerCompose() {
        RigFiles.Run run = dockerCompose("config", "-q");
        if (run.exitCode() != 0) {
            fail("docker-compose -f docker/docker-compose.yml config -q failed (exit " + run.exitCode() + "):\n" + run.output());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeFileRefersToFilesThatExist() throws IOException {
        // The configuration as compose resolves it: absolute build contexts and bind-mount sources.
        RigFiles.Run run = dockerCompose("config");
        assertThat(run.exitCode()).as("docker-compose config:\n%s", run.output()).isZero();
        Map<String, Object> services = (Map<String, Object>) RigFiles.yaml(run.output()).get("services");
        assertThat(services).containsKeys("kvs1", "kvs2", "kvs3", "james", "james2", "smtp-lb", "sink", "loadgen", "prometheus",
            "grafana");

        List<String> problems = new ArrayList<>();
        Set<Path> dockerfiles = new HashSet<>();
        for (Map.Entry<String, Object> entry : services.entrySet()) {
            String name = entry.getKey();
            Map<String, Object> service = (Map<String, Object>) entry.getValue();
            if (service.get("build") instanceof Map<?, ?> build) {
                Path context = Path.of((String) build.get("context"));
                Object dockerfileName = build.get("dockerfile");
                Path dockerfile = context.resolve(dockerfileName == null ? "Dockerfile" : (String) dockerfileName);
                if (!Files.isDirectory(context)) {
                    problems.add(name + ": build context " + context + " is not a directory");
                } else if (!Files.isRegularFile(dockerfile)) {
                    problems.add(name + ": no Dockerfile " + dockerfile);
                } else if (dockerfiles.add(dockerfile)) {
                    for (String source : RigFiles.copySources(dockerfile)) {
                        // target/ holds build outputs (mvn -q install -DskipTests makes them, see README.md):
                        // ComposeRigTest needs them; a fresh checkout does not have them yet.
                        if (!source.contains("target/") && !Files.exists(context.resolve(source))) {
                            problems.add(name + ": " + root.relativize(dockerfile) + " copies " + source
                                + ", which does not exist in its context " + context);
                        }
                    }
                }
            } else if (service.get("image") == null) {
                problems.add(name + ": neither build nor image");
            }
            for (Object volume : (List<Object>) service.getOrDefault("volumes", List.of())) {
                String source = volume instanceof Map<?, ?> map ? String.valueOf(map.get("source")) : String.valueOf(volume).split(":")[0];
                if (source.startsWith("/") && !Files.exists(Path.of(source))) {
                    problems.add(name + ": mounts " + source + ", which does not exist");
                }
            }
        }
        assertThat(problems).as("files docker/docker-compose.yml refers to").isEmpty();
        assertThat(dockerfiles).contains(docker.resolve("kvs-server/Dockerfile"), docker.resolve("james/Dockerfile"));
    }

    @Test
    void grafanaDashboardIsValidJsonOnTheProvisionedDatasource() throws IOException {
        ObjectMapper json = new ObjectMapper();
        Set<String> datasourceUids = new HashSet<>();
        for (Path file : files(docker.resolve("grafana/provisioning/datasources"), ".yml")) {
            for (Object ds : (List<?>) RigFiles.yaml(file).get("datasources")) {
                datasourceUids.add(String.valueOf(((Map<?, ?>) ds).get("uid")));
            }
        }
        assertThat(datasourceUids).as("provisioned datasource uids").isNotEmpty();
        for (Path file : files(docker.resolve("grafana/provisioning/dashboards"), ".yml")) {
            assertThat(RigFiles.yaml(file)).as(file.toString()).containsKey("providers");
        }

        List<Path> dashboards = files(docker.resolve("grafana/dashboards"), ".json");
        assertThat(dashboards).isNotEmpty();
        List<String> problems = new ArrayList<>();
        Set<String> exprs = new HashSet<>();
        for (Path file : dashboards) {
            JsonNode dashboard;
            try {
                dashboard = json.readTree(file.toFile());
            } catch (IOException e) {
                fail(file + " is not valid JSON: " + e.getMessage());
                return;
            }
            assertThat(dashboard.path("uid").asText()).as(file + " uid").isNotBlank();
            assertThat(dashboard.path("title").asText()).as(file + " title").isNotBlank();
            assertThat(dashboard.path("panels").size()).as(file + " panels").isPositive();
            for (JsonNode panel : dashboard.path("panels")) {
                if ("row".equals(panel.path("type").asText())) {
                    continue;
                }
                String uid = panel.path("datasource").path("uid").asText();
                if (!datasourceUids.contains(uid)) {
                    problems.add(file.getFileName() + " '" + panel.path("title").asText() + "': datasource uid '" + uid + "' is not provisioned");
                }
                if (panel.path("targets").isEmpty()) {
                    problems.add(file.getFileName() + " '" + panel.path("title").asText() + "': no query");
                }
                panel.path("targets").forEach(t -> exprs.add(t.path("expr").asText()));
            }
        }
        assertThat(problems).isEmpty();
        // The panels the rig promises (docker/README.md).
        for (String metric : List.of("kvs_requests_total", "kvs_errors_total", "kvs_queue_size", "kvs_journal_bytes",
            "kvs_connections", "kvs_block_seconds_bucket", "kvs_commit_seconds_bucket", "mailQueueSize:", "enqueuedMail:")) {
            assertThat(exprs).as("a dashboard query on " + metric).anyMatch(e -> e.contains(metric));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void prometheusConfigParsesAndScrapesTheRigServices() throws IOException {
        Map<String, Object> prometheus = RigFiles.yaml(docker.resolve("prometheus/prometheus.yml"));
        List<Map<String, Object>> jobs = (List<Map<String, Object>>) prometheus.get("scrape_configs");
        assertThat(jobs).as("scrape_configs").isNotEmpty();
        Map<String, Object> services = (Map<String, Object>) RigFiles.yaml(Files.readString(RigFiles.composeFile())).get("services");
        Set<String> targets = new HashSet<>();
        for (Map<String, Object> job : jobs) {
            for (Map<String, Object> staticConfig : (List<Map<String, Object>>) job.get("static_configs")) {
                for (Object target : (List<Object>) staticConfig.get("targets")) {
                    String host = String.valueOf(target).split(":")[0];
                    assertThat(services).as("job " + job.get("job_name") + " target " + target + " is a compose service").containsKey(host);
                    targets.add(String.valueOf(target));
                }
            }
        }
        String metricsPort = kvsServerProperties().getProperty("metrics.port");
        String webadminPort = properties(root.resolve("james-conf/webadmin.properties")).getProperty("port");
        assertThat(targets).containsExactlyInAnyOrder(
            "kvs1:" + metricsPort, "kvs2:" + metricsPort, "kvs3:" + metricsPort, "james:" + webadminPort,
            "james2:" + webadminPort);
    }

    /**
     * SMTP is spread over the two James nodes as the paper's L4 switch does: the load generator sends to
     * smtp-lb, whose HAProxy backend sends each connection to james and james2 in turn; the two nodes are
     * the same image with different host names (hence node ids and namespaces).
     */
    @Test
    @SuppressWarnings("unchecked")
    void smtpIsSpreadRoundRobinOverTwoJamesNodes() throws Exception {
        RigFiles.Run run = dockerCompose("config");
        assertThat(run.exitCode()).as("docker-compose config:\n%s", run.output()).isZero();
        Map<String, Object> services = (Map<String, Object>) RigFiles.yaml(run.output()).get("services");
        Map<String, Object> james = (Map<String, Object>) services.get("james");
        Map<String, Object> james2 = (Map<String, Object>) services.get("james2");
        assertThat(james2.get("image")).isEqualTo(james.get("image"));
        assertThat(james2.get("environment")).isEqualTo(james.get("environment"));
        assertThat(List.of(james.get("hostname"), james2.get("hostname"))).containsExactly("james", "james2");
        assertThat(String.valueOf(((Map<String, Object>) services.get("loadgen")).get("command"))).contains("smtp-lb:2525");

        String haproxy = Files.readString(docker.resolve("smtp-lb/haproxy.cfg"));
        assertThat(haproxy).containsPattern("(?m)^\\s*mode tcp\\s*$").containsPattern("(?m)^\\s*balance roundrobin\\s*$")
            .containsPattern("(?m)^\\s*bind 0\\.0\\.0\\.0:2525\\s*$")
            .containsPattern("(?m)^\\s*server james\\s+james:2525\\s+check")
            .containsPattern("(?m)^\\s*server james2\\s+james2:2525\\s+check");
        assertThat(String.valueOf(((Map<String, Object>) services.get("smtp-lb")).get("volumes"))).contains("haproxy.cfg");
    }

    /** The ports the Dockerfiles, compose file and prometheus.yml use are those of the process rig's files. */
    @Test
    void processRigConfigurationMatchesWhatTheRigAssumes() throws IOException {
        Properties server = kvsServerProperties();
        assertThat(server.getProperty("listen.port")).as("conf/kvs-server.properties listen.port (EXPOSE, KVS_SERVERS)").isEqualTo("7400");
        assertThat(server.getProperty("metrics.port")).as("conf/kvs-server.properties metrics.port (EXPOSE, healthcheck)").isEqualTo("9464");
        assertThat(server.getProperty("metrics.enabled", "true")).as("conf/kvs-server.properties metrics.enabled").isEqualTo("true");
        Properties spool = properties(root.resolve("james-conf/kvs-spool.properties"));
        // No usable password is shipped: the rig's comes from the kvs-secret volume (see below).
        assertThat(server.getProperty("auth.password", "")).as("conf/kvs-server.properties auth.password").isEmpty();
        assertThat(spool.getProperty("password", "")).as("james-conf/kvs-spool.properties password").isEmpty();
        assertThat(spool.getProperty("user", "james")).as("james-conf/kvs-spool.properties user = conf auth.user")
            .isEqualTo(server.getProperty("auth.user", "james"));
        assertThat(properties(root.resolve("james-conf/webadmin.properties")).getProperty("port"))
            .as("james-conf/webadmin.properties port (EXPOSE, healthcheck, prometheus.yml)").isEqualTo("8000");
        Matcher bind = Pattern.compile("<bind>[^<]*:(\\d+)</bind>").matcher(Files.readString(root.resolve("james-conf/smtpserver.xml")));
        assertThat(bind.find()).as("james-conf/smtpserver.xml has a <bind>").isTrue();
        assertThat(bind.group(1)).as("james-conf/smtpserver.xml SMTP port (EXPOSE, healthcheck, loadgen)").isEqualTo("2525");
    }

    /**
     * The entrypoint runs in the Debian-based image with GNU sed ({@code sed -i}); BSD sed (macOS) differs.
     * A skip here becomes a failure under bin/test ({@link ExternalTool}).
     */
    private static void assumeGnuSed(Path home) {
        ExternalTool.assumeAvailable(RigFiles.run(home, Map.of(), COMMAND_TIMEOUT, "sed", "--version").exitCode() == 0,
            "GNU sed is missing, which docker/james/entrypoint.sh uses (sed -i) as in the James image");
    }

    /** docker/james/entrypoint.sh still finds in james-conf/ each element it overrides for the container. */
    @Test
    void jamesEntrypointAppliesItsContainerValuesToJamesConf(@TempDir Path home) throws IOException {
        assumeGnuSed(home);
        Path passwordFile = home.resolve("kvs-password");
        Files.writeString(passwordFile, "0123abcd-rig-password\n");
        RigFiles.Run run = RigFiles.run(home, Map.of("JAMES_HOME", home.toString(),
                "JAMES_CONF_SOURCE", root.resolve("james-conf").toString(), "KVS_PASSWORD_FILE", passwordFile.toString()),
            COMMAND_TIMEOUT, "sh", docker.resolve("james/entrypoint.sh").toString(), "--prepare-only");
        assertThat(run.exitCode()).as("entrypoint.sh --prepare-only:\n%s", run.output()).isZero();
        assertThat(run.output()).as("the entrypoint never prints the password").doesNotContain("0123abcd-rig-password");
        Path conf = home.resolve("conf");
        assertThat(properties(conf.resolve("kvs-spool.properties")))
            .containsEntry("servers", "kvs1:7400,kvs2:7400,kvs3:7400")
            .containsEntry("password", "0123abcd-rig-password");
        assertThat(properties(conf.resolve("webadmin.properties")))
            .containsEntry("host", "0.0.0.0")
            .containsEntry("extensions.routes", "org.apache.james.webadmin.dropwizard.MetricsRoutes");
        assertThat(Files.readString(conf.resolve("smtpserver.xml"))).contains("<bind>0.0.0.0:2525</bind>");
        assertThat(Files.readString(conf.resolve("mailetcontainer.xml"))).contains("<gateway>sink</gateway>", "<gatewayPort>2526</gatewayPort>");
        assertThat(Files.readString(conf.resolve("dnsservice.xml"))).contains("<server>127.0.0.11</server>");
        // Everything else is james-conf as is.
        for (String unchanged : List.of("mailrepositorystore.xml", "logback.xml", "jvm.properties", "domainlist.xml")) {
            assertThat(conf.resolve(unchanged)).hasSameTextualContentAs(root.resolve("james-conf").resolve(unchanged));
        }
    }

    /** Without a password file James's container stops with a message instead of starting without a password. */
    @Test
    void jamesEntrypointStopsWithoutThePasswordFile(@TempDir Path home) {
        assumeGnuSed(home);
        RigFiles.Run run = RigFiles.run(home, Map.of("JAMES_HOME", home.toString(),
                "JAMES_CONF_SOURCE", root.resolve("james-conf").toString(),
                "KVS_PASSWORD_FILE", home.resolve("absent").toString()),
            COMMAND_TIMEOUT, "sh", docker.resolve("james/entrypoint.sh").toString(), "--prepare-only");
        assertThat(run.exitCode()).as(run.output()).isNotZero();
        assertThat(run.output()).contains("no KVS password in " + home.resolve("absent"));
    }

    /** The rig's password: generated once (random, kept across runs), or KVS_PASSWORD; never printed. */
    @Test
    void kvsSecretScriptGeneratesKeepsOrTakesThePassword(@TempDir Path secrets) throws IOException {
        String script = docker.resolve("kvs-server/kvs-secret.sh").toString();
        Path file = secrets.resolve("password");
        RigFiles.Run first = RigFiles.run(secrets, Map.of("KVS_SECRET_DIR", secrets.toString()), COMMAND_TIMEOUT, "sh", script);
        assertThat(first.exitCode()).as(first.output()).isZero();
        String generated = Files.readString(file).strip();
        assertThat(generated).matches("[0-9a-f]{64}");
        assertThat(first.output()).doesNotContain(generated);
        RigFiles.Run again = RigFiles.run(secrets, Map.of("KVS_SECRET_DIR", secrets.toString()), COMMAND_TIMEOUT, "sh", script);
        assertThat(again.exitCode()).as(again.output()).isZero();
        assertThat(Files.readString(file).strip()).as("kept across runs").isEqualTo(generated);

        Path other = secrets.resolve("other");
        RigFiles.Run second = RigFiles.run(secrets, Map.of("KVS_SECRET_DIR", other.toString()), COMMAND_TIMEOUT, "sh", script);
        assertThat(second.exitCode()).as(second.output()).isZero();
        assertThat(Files.readString(other.resolve("password")).strip()).as("a new rig, a new password").isNotEqualTo(generated);

        RigFiles.Run given = RigFiles.run(secrets, Map.of("KVS_SECRET_DIR", secrets.toString(), "KVS_PASSWORD", "from-env-9f3k"),
            COMMAND_TIMEOUT, "sh", script);
        assertThat(given.exitCode()).as(given.output()).isZero();
        assertThat(Files.readString(file).strip()).isEqualTo("from-env-9f3k");
        assertThat(given.output()).doesNotContain("from-env-9f3k");
    }

    /** Every KVS node reads the password the kvs-secret service writes, after it has; James reads the same file. */
    @Test
    @SuppressWarnings("unchecked")
    void everyNodeAndJamesUseTheRigsGeneratedPassword() {
        RigFiles.Run run = dockerCompose("config");
        assertThat(run.exitCode()).as("docker-compose config:\n%s", run.output()).isZero();
        Map<String, Object> services = (Map<String, Object>) RigFiles.yaml(run.output()).get("services");
        String file = "/run/kvs-secret/password";
        Map<String, Object> secret = (Map<String, Object>) services.get("kvs-secret");
        assertThat(secret).as("the kvs-secret service").isNotNull();
        assertThat((List<Object>) secret.get("volumes")).anyMatch(v -> String.valueOf(v).startsWith("kvs-secret:/run/kvs-secret"));
        for (String node : List.of("kvs1", "kvs2", "kvs3")) {
            Map<String, Object> service = (Map<String, Object>) services.get(node);
            Map<String, Object> env = (Map<String, Object>) service.get("environment");
            assertThat(String.valueOf(env.get("KVS_OPTS"))).as(node + " KVS_OPTS").contains("-Dkvs.auth.passwordFile=" + file);
            assertThat((List<Object>) service.get("volumes")).as(node + " volumes").contains("kvs-secret:/run/kvs-secret:ro");
            Map<String, Object> dependsOn = (Map<String, Object>) service.get("depends_on");
            assertThat(String.valueOf(dependsOn.get("kvs-secret"))).as(node + " waits for kvs-secret").contains("service_completed_successfully");
        }
        Map<String, Object> james = (Map<String, Object>) services.get("james");
        assertThat((Map<String, Object>) james.get("environment")).containsEntry("KVS_PASSWORD_FILE", file);
        assertThat((List<Object>) james.get("volumes")).contains("kvs-secret:/run/kvs-secret:ro");
    }

    /** docker-compose -f docker/docker-compose.yml ARGS in the repository root. */
    private RigFiles.Run dockerCompose(String... args) {
        ExternalTool.assumeAvailable(RigFiles.onPath("docker-compose") != null, "docker-compose is not on PATH");
        List<String> command = new ArrayList<>(List.of("docker-compose", "-f", "docker/docker-compose.yml"));
        command.addAll(List.of(args));
        return RigFiles.run(root, Map.of(), COMMAND_TIMEOUT, command.toArray(String[]::new));
    }

    private Properties kvsServerProperties() throws IOException {
        return properties(root.resolve("conf/kvs-server.properties"));
    }

    private static Properties properties(Path file) throws IOException {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        }
        return properties;
    }

    private static List<Path> files(Path directory, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(f -> f.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }
}
