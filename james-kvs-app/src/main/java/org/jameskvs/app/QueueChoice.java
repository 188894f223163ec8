package org.jameskvs.app;

import java.util.List;
import java.util.Locale;

import org.jameskvs.app.cluster.KvsClusterRoutesModule;
import org.jameskvs.james.guice.KvsMailQueueModule;

import com.google.inject.Module;


/**
 * Which mail queue James runs with: chosen by the system property {@code kvs.queue}
 * ({@code kvs}, the default; {@code memory}). James's stock ActiveMQ queue, the durable baseline of the
 * spool benchmark, is started by james-kvs-bench's main, so that its jars stay out of this app's lib/.
 */
public enum QueueChoice {
    /**
     * The KVS spool plug-in: mail queues kept by the KVS server(s) named in conf/kvs-spool.properties.
     * KvsMailQueueModule also binds what the kvs:// mail repository needs.
     */
    KVS("kvs") {
        @Override
        List<Module> overrides() {
            return List.of(new KvsMailQueueModule(), new KvsClusterRoutesModule());
        }
    },
    /** James's stock in-memory queue (what the memory app ships with): nothing is overridden. */
    MEMORY("memory") {
        @Override
        List<Module> overrides() {
            return List.of();
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

    /** The modules that override the memory app's to put this queue in (none for its own queue). */
    abstract List<Module> overrides();

    public static QueueChoice fromSystemProperties() {
        return parse(System.getProperty(PROPERTY, KVS.label));
    }

    public static QueueChoice parse(String value) {
        for (QueueChoice choice : values()) {
            if (choice.label.equals(value.trim().toLowerCase(Locale.ROOT))) {
                return choice;
            }
        }
        throw new IllegalArgumentException(PROPERTY + "=" + value + ": expected kvs or memory (the ActiveMQ"
            + " baseline starts with org.jameskvs.spoolbench.BenchJamesServerMain from james-kvs-bench/target/bench/lib)");
    }
}
