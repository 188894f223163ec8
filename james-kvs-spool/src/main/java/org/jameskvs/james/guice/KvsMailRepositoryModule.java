package org.jameskvs.james.guice;

import com.google.inject.AbstractModule;

/**
 * For the repository alone (James keeps its own queue): name it in {@code extensions.properties}
 * ({@code guice.extension.module=org.jameskvs.james.guice.KvsMailRepositoryModule}) and register
 * {@code org.jameskvs.james.repository.KvsMailRepository} for protocol {@code kvs} in
 * {@code mailrepositorystore.xml}. Not needed (and not to be added) when {@link KvsMailQueueModule}
 * is in the main injector: it already provides everything the repository needs.
 */
public class KvsMailRepositoryModule extends AbstractModule {
    @Override
    protected void configure() {
        install(new KvsSpoolModule());
    }
}
