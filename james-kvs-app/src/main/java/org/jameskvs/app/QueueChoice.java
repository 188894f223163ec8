package org.jameskvs.app;

import java.util.Locale;

import org.apache.james.GuiceJamesServer;
import org.jameskvs.james.guice.KvsMailQueueModule;


/**
 * Which mail queue James runs with: chosen by the system property {@code kvs.queue}
 * ({@code kvs}, the default; {@code memory}; {@code activemq}).
 */
public enum QueueChoice {
    /**
     * The KVS spool plug-in: mail queues kept by the KVS server(s) named in conf/kvs-spool.properties.
     * KvsMailQueueModule also binds what the kvs:// mail repository needs.
     */
    KVS("kvs") {
        @Override
        GuiceJamesServer applyTo(GuiceJamesServer server) {
            return server.overrideWith(new KvsMailQueueModule());
        }
    },
    /** James's stock in-memory queue (what the memory app ships with): nothing is overridden. */
    MEMORY("memory") {
        @Override
        GuiceJamesServer applyTo(GuiceJamesServer server) {
            return server;
        }
    },
    /** James's stock durable queue: embedded ActiveMQ with KahaDB under var/store/activemq. */
    ACTIVEMQ("activemq") {
        @Override
        GuiceJamesServer applyTo(GuiceJamesServer server) {
            return server.overrideWith(new ActiveMQBaselineQueueModule());
        }
    };

    public static final String PROPERTY = "kvs.queue";

    private final String label;

    QueueChoice(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    abstract GuiceJamesServer applyTo(GuiceJamesServer server);

    public static QueueChoice fromSystemProperties() {
        return parse(System.getProperty(PROPERTY, KVS.label));
    }

    public static QueueChoice parse(String value) {
        for (QueueChoice choice : values()) {
            if (choice.label.equals(value.trim().toLowerCase(Locale.ROOT))) {
                return choice;
            }
        }
        throw new IllegalArgumentException(PROPERTY + "=" + value + ": expected kvs, memory or activemq");
    }
}
