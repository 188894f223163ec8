package org.jameskvs.testkit.james;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A copy of the project's james-conf (system property {@code james.conf.source}) in a James working
 * directory, with ports and servers rewritten. Every rewrite checks the text it replaces is there, so a
 * change to james-conf cannot silently leave the tests on the wrong port.
 */
public final class JamesConf {
    private final Path conf;

    private JamesConf(Path conf) {
        this.conf = conf;
    }

    public static Path source() {
        String source = System.getProperty("james.conf.source");
        if (source == null || !Files.isDirectory(Path.of(source))) {
            throw new IllegalStateException("james.conf.source does not name the james-conf directory: " + source);
        }
        return Path.of(source);
    }

    /** Copies james-conf into {@code workingDirectory}/conf. */
    public static JamesConf copyInto(Path workingDirectory) throws IOException {
        Path conf = workingDirectory.resolve("conf");
        Files.createDirectories(conf);
        try (Stream<Path> files = Files.list(source())) {
            for (Path file : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(file)) {
                    Files.copy(file, conf.resolve(file.getFileName()));
                }
            }
        }
        // The tests' James is node "james" (its KVS queues james/queue/...), not the host name.
        return new JamesConf(conf).replace("kvs-spool.properties", "\n#nodeId=james-1\n", "\nnodeId=james\n");
    }

    public JamesConf smtpPort(int port) {
        return replace("smtpserver.xml", "<bind>127.0.0.1:2525</bind>", "<bind>127.0.0.1:" + port + "</bind>");
    }

    public JamesConf webadminPort(int port) {
        return replace("webadmin.properties", "\nport=8000\n", "\nport=" + port + "\n");
    }

    public JamesConf gatewayPort(int port) {
        return replace("mailetcontainer.xml", "<gatewayPort>2526</gatewayPort>", "<gatewayPort>" + port + "</gatewayPort>");
    }

    /** One KVS node: {@code servers=} is that node and the replication lines are commented out. */
    public JamesConf kvsSingleNode(String server, String password) {
        return replace("kvs-spool.properties", "\nservers=127.0.0.1:7401\n", "\nservers=" + server + "\n")
            .replace("kvs-spool.properties", "\nreplication.nodes=", "\n#replication.nodes=")
            .replace("kvs-spool.properties", "\nreplication.node.node1.active=", "\n#replication.node.node1.active=")
            .replace("kvs-spool.properties", "\nreplication.node.node2.active=", "\n#replication.node.node2.active=")
            .kvsPassword(password);
    }

    /** Two copies on these two KVS nodes (the replication block of kvs-spool.properties). */
    public JamesConf kvsReplicated(String node1, String node2, String password) {
        return replace("kvs-spool.properties", "\nreplication.nodes=node1,node2\n", "\nreplication.nodes=node1,node2\n")
            .replace("kvs-spool.properties", "\nreplication.node.node1.active=127.0.0.1:7401\n", "\nreplication.node.node1.active=" + node1 + "\n")
            .replace("kvs-spool.properties", "\nreplication.node.node2.active=127.0.0.1:7402\n", "\nreplication.node.node2.active=" + node2 + "\n")
            .kvsPassword(password);
    }

    public JamesConf kvsPassword(String password) {
        return replace("kvs-spool.properties", "\npassword=\n", "\npassword=" + password + "\n");
    }

    public JamesConf kvsRequestTimeoutMillis(int millis) {
        return replace("kvs-spool.properties", "\nrequestTimeout=30000\n", "\nrequestTimeout=" + millis + "\n");
    }

    /** smtpserver.xml's {@code maxmessagesize} (KB; 0 = no limit) instead of james-conf's 64512. */
    public JamesConf maxMessageSizeKb(long kb) {
        return replace("smtpserver.xml", "<maxmessagesize>64512</maxmessagesize>", "<maxmessagesize>" + kb + "</maxmessagesize>");
    }

    /** RemoteDelivery's retry delays (mailetcontainer.xml's {@code <delayTime>}, e.g. "500, 1000, 3 * 3600000"). */
    public JamesConf remoteDeliveryDelays(String delayTime) {
        return replace("mailetcontainer.xml", "<delayTime>1000, 2000, 3 * 5000</delayTime>", "<delayTime>" + delayTime + "</delayTime>");
    }

    /** For the stock-queue baselines: kvs:// repositories become memory:// ones (no KVS module is installed). */
    public JamesConf withoutKvsRepository() {
        return replace("mailetcontainer.xml", "kvs://var/mail/error/", "memory://var/mail/error/")
            .removeAll("mailrepositorystore.xml", "(?s)<mailrepository class=\"org\\.jameskvs[^\"]*\">.*?</mailrepository>");
    }

    public JamesConf removeAll(String file, String regex) {
        Path path = conf.resolve(file);
        try {
            String text = Files.readString(path);
            String removed = text.replaceAll(regex, "");
            if (removed.equals(text)) {
                throw new IllegalStateException(path + " has nothing matching " + regex + ": update the test");
            }
            Files.writeString(path, removed);
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public JamesConf replace(String file, String from, String to) {
        Path path = conf.resolve(file);
        try {
            String text = Files.readString(path);
            if (!text.contains(from)) {
                throw new IllegalStateException(path + " no longer contains '" + from.strip() + "': update the test");
            }
            Files.writeString(path, text.replace(from, to));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
