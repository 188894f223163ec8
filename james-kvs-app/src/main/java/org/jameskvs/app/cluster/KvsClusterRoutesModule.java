package org.jameskvs.app.cluster;

import org.apache.james.webadmin.Routes;

import com.google.inject.AbstractModule;
import com.google.inject.multibindings.Multibinder;

/** Adds the cluster routes ({@link KvsClusterRoutes}) to James's webadmin. */
public class KvsClusterRoutesModule extends AbstractModule {
    @Override
    protected void configure() {
        Multibinder.newSetBinder(binder(), Routes.class).addBinding().to(KvsClusterRoutes.class);
    }
}
