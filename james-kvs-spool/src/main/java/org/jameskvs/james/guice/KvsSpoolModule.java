package org.jameskvs.james.guice;

import java.io.File;
import java.io.FileNotFoundException;

import javax.inject.Singleton;

import org.apache.james.filesystem.api.FileSystem;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.cluster.NamespaceReclaim;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.queue.NodeIdentityGuard;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;

/**
 * What both the queue and the repository need: the configuration (read from
 * {@code conf/kvs-spool.properties}), the connection ({@link KvsQueueOpener}; override this binding
 * to plug the replication layer in) and the shared {@link KvsQueues}, built only once
 * {@link NodeIdentityGuard} found no other live process writing under this node's identity. Installed by
 * {@link KvsMailQueueModule} and {@link KvsMailRepositoryModule}; equal to any other instance, so
 * installing both in one injector binds it once.
 */
public class KvsSpoolModule extends AbstractModule {

    @Provides
    @Singleton
    KvsSpoolConfiguration configuration(FileSystem fileSystem) {
        return configurationIn(fileSystem);
    }

    /** {@code conf/kvs-spool.properties} of the running James; the defaults if there is none. */
    public static KvsSpoolConfiguration configurationIn(FileSystem fileSystem) {
        File file;
        try {
            file = fileSystem.getFile(FileSystem.FILE_PROTOCOL_AND_CONF + KvsSpoolConfiguration.FILE_NAME);
        } catch (FileNotFoundException e) {
            return KvsSpoolConfiguration.defaults();
        }
        return KvsSpoolConfiguration.load(file.getParentFile().toPath());
    }

    @Provides
    @Singleton
    KvsQueueOpener opener(KvsSpoolConfiguration configuration) {
        return configuration.replicated() ? ReplicatedKvsOpener.start(configuration)
            : KvsClientOpener.connect(configuration);
    }

    @Provides
    @Singleton
    KvsQueues queues(KvsQueueOpener opener, KvsSpoolConfiguration configuration) {
        NodeIdentityGuard.check(opener, configuration);
        KvsQueues queues = new KvsQueues(opener, configuration);
        try {
            NamespaceReclaim.takeBack(opener, configuration)
                .forEach((name, taken) -> queues.useOpened(name, taken.queue(), taken.epoch()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("kvs-spool: interrupted while taking this node's namespace back", e);
        }
        return queues;
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == KvsSpoolModule.class;
    }

    @Override
    public int hashCode() {
        return KvsSpoolModule.class.hashCode();
    }
}
