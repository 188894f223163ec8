package org.jameskvs.james.guice;

import javax.inject.Singleton;

import org.apache.james.core.healthcheck.HealthCheck;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.ManageableMailQueue;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.cluster.ClusterWatch;
import org.jameskvs.james.health.KvsSpoolHealthCheck;
import org.jameskvs.james.queue.KvsMailQueueFactory;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Scopes;
import com.google.inject.multibindings.Multibinder;

/**
 * Replaces James's mail queue with the KVS one: binds the three keys James asks for. It must go into
 * the main injector, overriding the app's queue module ({@code GuiceJamesServer.overrideWith}); an
 * extension module (child injector) cannot rebind them. It also makes {@code KvsMailRepository}
 * injectable, so a KVS repository then needs no extension module, and adds the spool's health check
 * ({@link KvsSpoolHealthCheck}) to James's.
 */
public class KvsMailQueueModule extends AbstractModule {

    @Override
    protected void configure() {
        install(new KvsSpoolModule());
        bind(KvsMailQueueFactory.class).in(Scopes.SINGLETON);
        Multibinder.newSetBinder(binder(), HealthCheck.class).addBinding().to(KvsSpoolHealthCheck.class);
        bind(ClusterWatch.class).toProvider(ClusterWatchProvider.class).asEagerSingleton();
    }

    /** This node's lease watch and adoptions, started with the injector (see {@link ClusterWatch}). */
    static final class ClusterWatchProvider implements com.google.inject.Provider<ClusterWatch> {
        private final KvsQueueOpener opener;
        private final KvsQueues queues;
        private final KvsMailQueueFactory factory;

        @com.google.inject.Inject
        ClusterWatchProvider(KvsQueueOpener opener, KvsQueues queues, KvsMailQueueFactory factory) {
            this.opener = opener;
            this.queues = queues;
            this.factory = factory;
        }

        @Override
        public ClusterWatch get() {
            return new ClusterWatch(opener instanceof ReplicatedKvsOpener replicated ? replicated : null, queues, factory).start();
        }
    }

    @Provides
    @Singleton
    MailQueueFactory<?> mailQueueFactory(KvsMailQueueFactory factory) {
        return factory;
    }

    @Provides
    @Singleton
    MailQueueFactory<? extends MailQueue> mailQueueFactoryOfMailQueues(KvsMailQueueFactory factory) {
        return factory;
    }

    @Provides
    @Singleton
    MailQueueFactory<? extends ManageableMailQueue> manageableMailQueueFactory(KvsMailQueueFactory factory) {
        return factory;
    }
}
