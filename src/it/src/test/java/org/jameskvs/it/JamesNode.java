package org.jameskvs.it;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;
import org.jameskvs.testkit.james.WebAdmin;

/**
 * Apache James 3.8.1 (memory app + the KVS spool plug-in) as the test kit's {@link JamesProcess}, with
 * the suite's child JVM flags and open-files limit, and james-conf rewritten for the suite: free
 * SMTP/webadmin ports, RemoteDelivery's gateway = the sink, two copies of every queue on the three KVS
 * nodes. Its working directory, configuration and ports are fixed at creation, so {@link #kill9()} then
 * {@link #startAgain()} is a restart of the same James: same conf, same owner name and epoch setting
 * (the replication layer reclaims the queues with the next epoch itself; see kvs-replication's
 * OpenProcedure).
 */
final class JamesNode implements AutoCloseable {
    private final JamesProcess process;

    private JamesNode(JamesProcess process) {
        this.process = process;
    }

    /**
     * Writes the configuration: james-conf with two copies of every queue on the three {@code nodes}
     * ({@code replication.nodes=kvs1,kvs2,kvs3}), requestTimeout 5 s, then {@code configure}; starts James.
     */
    static JamesNode start(java.nio.file.Path directory, int sinkPort, List<KvsNode> nodes, Consumer<JamesConf> configure) throws Exception {
        if (nodes.size() != 3) {
            throw new IllegalArgumentException("three KVS nodes expected");
        }
        JamesNode james = new JamesNode(JamesProcess.create(directory, "kvs", sinkPort, Limits.CHILD_JVM_FLAGS, conf -> {
            conf.kvsRequestTimeoutMillis(5_000)
                .kvsPassword(KvsNode.PASSWORD)
                .replace("kvs-spool.properties", "\nreplication.nodes=node1,node2\n", "\nreplication.nodes=kvs1,kvs2,kvs3\n")
                .replace("kvs-spool.properties", "\nreplication.node.node1.active=127.0.0.1:7401\n",
                    "\nreplication.node.kvs1.active=" + nodes.get(0).address() + "\n")
                .replace("kvs-spool.properties", "\nreplication.node.node2.active=127.0.0.1:7402\n",
                    "\nreplication.node.kvs2.active=" + nodes.get(1).address() + "\n"
                        + "replication.node.kvs3.active=" + nodes.get(2).address() + "\n");
            configure.accept(conf);
        }));
        james.startAgain();
        return james;
    }

    /** Starts James (again) in the same directory with the same conf and ports; waits until SMTP answers. */
    void startAgain() throws Exception {
        process.startAgain(Limits.openFilesPrefix());
    }

    void kill9() throws InterruptedException {
        process.kill9();
    }

    /** Sends a signal to the James process ({@code STOP}, {@code CONT}): pausing it without killing it. */
    void signal(String signal) throws Exception {
        process.signal(signal);
    }

    /** SIGTERM, then SIGKILL after 30 s: James stopped as an operator stops it. */
    void stop() throws InterruptedException {
        process.close();
    }

    int smtpPort() {
        return process.smtpPort();
    }

    int webadminPort() {
        return process.webadminPort();
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String logTail(int lines) {
        return process.logTail(lines);
    }

    String logText() {
        return process.logText();
    }

    /** Webadmin GET body, or the error text (for diagnostics; never throws). */
    String webadmin(String path) {
        try {
            return new WebAdmin(webadminPort()).get(path);
        } catch (Exception e) {
            return "(" + path + ": " + e.getMessage() + ")";
        }
    }

    /** HTTP status of a webadmin GET (e.g. 503 from {@code /healthcheck} when a component is unhealthy). */
    int webadminStatus(String path) throws Exception {
        return webadminCall("GET", path).statusCode();
    }

    /** A webadmin call without a body (GET, PUT, DELETE): status and body, whatever the status. */
    java.net.http.HttpResponse<String> webadminCall(String method, String path) throws Exception {
        java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + webadminPort() + path))
            .timeout(Duration.ofSeconds(60)).method(method, java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    /** One mail through SMTP; @return the reply code of its transaction (-1: the connection failed). */
    int sendOne(String messageId) {
        try (org.jameskvs.testkit.smtp.SmtpClient client = org.jameskvs.testkit.smtp.SmtpClient.connect("127.0.0.1", smtpPort(), 30_000)) {
            return client.send("sender@it.test", TrackingLoad.RECIPIENT,
                org.jameskvs.testkit.smtp.SmtpClient.message("sender@it.test", TrackingLoad.RECIPIENT, messageId, "probe"));
        } catch (java.io.IOException e) {
            return -1;
        }
    }

    /** The number of mails in the error repository ({@code var/mail/error}), from webadmin. */
    int errorRepositorySize() throws Exception {
        String body = new WebAdmin(webadminPort()).get("/mailRepositories/var%2Fmail%2Ferror");
        java.util.regex.Matcher size = java.util.regex.Pattern.compile("\"size\"\\s*:\\s*(\\d+)").matcher(body);
        if (!size.find()) {
            throw new IllegalStateException("no size in " + body);
        }
        return Integer.parseInt(size.group(1));
    }

    /** Queue sizes and the error repository, for failure messages and the scenario line. */
    String queuesSummary() {
        return "spool=" + webadmin("/mailQueues/spool") + " outgoing=" + webadmin("/mailQueues/outgoing")
            + " errorRepository=" + webadmin("/mailRepositories/var%2Fmail%2Ferror");
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
