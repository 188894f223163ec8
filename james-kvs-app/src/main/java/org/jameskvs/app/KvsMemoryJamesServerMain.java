package org.jameskvs.app;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.james.ExtraProperties;
import org.apache.james.GuiceJamesServer;
import org.apache.james.JamesServerMain;
import org.apache.james.MemoryJamesConfiguration;
import org.apache.james.MemoryJamesServerMain;
import org.apache.james.modules.RunArgumentsModule;

import com.google.inject.Module;

/**
 * Apache James 3.8.1 memory app whose mail queues (spool, outgoing, ...) live in the KVS server.
 *
 * <p>A mail queue cannot come in as a James extension module (extension modules go into a child
 * injector, where the queue keys are already bound), so this main builds the memory app's server and
 * overrides its queue module. Start it from a directory holding {@code conf/}:
 *
 * <pre>
 * java -cp 'james-kvs-app/target/james/lib/*' -Dworking.directory=. \
 *      -Dlogback.configurationFile=conf/logback.xml org.jameskvs.app.KvsMemoryJamesServerMain
 * </pre>
 *
 * <p>{@code -Dkvs.queue=memory} runs the same James with its stock in-memory queue (a baseline; the
 * ActiveMQ baseline is james-kvs-bench's main, which starts James through {@link #start}).
 * Unlike the stock memory app main, no JMX server is started (one port less; nothing here needs it).
 */
public final class KvsMemoryJamesServerMain {

    private KvsMemoryJamesServerMain() {
    }

    public static void main(String[] args) throws Exception {
        QueueChoice queue = QueueChoice.fromSystemProperties();
        start(queue.label(), queue.overrides(), args);
    }

    /**
     * Starts the memory app from the working directory with {@code queueModules} in place of its mail
     * queue module ({@code queueLabel} names that queue in the log).
     */
    public static void start(String queueLabel, List<Module> queueModules, String[] args) throws Exception {
        defaultExtraPropertiesToWorkingDirectory();
        ExtraProperties.initialize();
        MemoryJamesConfiguration configuration = MemoryJamesConfiguration.builder()
            .useWorkingDirectoryEnvProperty()
            .build();
        JamesServerMain.LOGGER.info("Starting James memory app with the {} mail queue", queueLabel);
        GuiceJamesServer server = createServer(configuration, queueModules, new RunArgumentsModule(args));
        JamesServerMain.main(server);
    }

    /**
     * The memory app's server with {@code queueModules} in place of its mail queue module (none: its
     * own queue), and {@code moreOverrides} overriding too, all in one {@code overrideWith}: every
     * override level makes Guice keep another source record per binding (about 700 bindings) for the
     * life of the server.
     */
    public static GuiceJamesServer createServer(MemoryJamesConfiguration configuration, List<Module> queueModules,
                                                Module... moreOverrides) {
        List<Module> overrides = new ArrayList<>(queueModules);
        overrides.addAll(Arrays.asList(moreOverrides));
        GuiceJamesServer server = MemoryJamesServerMain.createServer(configuration);
        return overrides.isEmpty() ? server : server.overrideWith(overrides);
    }

    /** James reads {@code conf/jvm.properties} relative to the process directory; prefer the working directory's. */
    private static void defaultExtraPropertiesToWorkingDirectory() {
        String workingDirectory = System.getProperty("working.directory");
        if (System.getProperty(ExtraProperties.OVERRIDE_PROPERTY) == null && workingDirectory != null) {
            System.setProperty(ExtraProperties.OVERRIDE_PROPERTY,
                java.nio.file.Path.of(workingDirectory, "conf", "jvm.properties").toString());
        }
    }
}
