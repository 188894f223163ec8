package org.jameskvs.spoolbench;

import javax.jms.ConnectionFactory;

import org.apache.activemq.store.PersistenceAdapter;
import org.apache.activemq.store.kahadb.KahaDBPersistenceAdapter;
import org.apache.james.core.healthcheck.HealthCheck;
import org.apache.james.queue.activemq.ActiveMQConfiguration;
import org.apache.james.queue.activemq.ActiveMQHealthCheck;
import org.apache.james.queue.activemq.ActiveMQMailQueueFactory;
import org.apache.james.queue.activemq.EmbeddedActiveMQ;
import org.apache.james.queue.activemq.metric.ActiveMQMetricCollector;
import org.apache.james.queue.activemq.metric.ActiveMQMetricCollectorImpl;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.utils.InitializationOperation;
import org.apache.james.utils.InitilizationOperationBuilder;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Scopes;
import com.google.inject.Singleton;
import com.google.inject.multibindings.Multibinder;
import com.google.inject.multibindings.ProvidesIntoSet;

/**
 * James's stock ActiveMQ mail queue (embedded broker, KahaDB under {@code var/store/activemq}), bound
 * the way James's own {@code ActiveMQQueueModule} does; that Guice module's artifact is not published
 * for 3.8.1, so it is written out here. Used for the ActiveMQ baseline ({@link BenchJamesServerMain},
 * {@code -Dkvs.queue=activemq}).
 * Broker metrics use {@link ActiveMQConfiguration#getDefault()}.
 */
public class ActiveMQBaselineQueueModule extends AbstractModule {

    @Override
    protected void configure() {
        bind(PersistenceAdapter.class).to(KahaDBPersistenceAdapter.class);
        bind(KahaDBPersistenceAdapter.class).in(Scopes.SINGLETON);
        bind(EmbeddedActiveMQ.class).in(Scopes.SINGLETON);
        bind(ActiveMQMailQueueFactory.class).in(Scopes.SINGLETON);
        bind(ActiveMQMetricCollector.class).to(ActiveMQMetricCollectorImpl.class);
        bind(ActiveMQMetricCollectorImpl.class).in(Scopes.SINGLETON);
        bind(ActiveMQConfiguration.class).toInstance(ActiveMQConfiguration.getDefault());
        Multibinder.newSetBinder(binder(), HealthCheck.class).addBinding().to(ActiveMQHealthCheck.class);
    }

    @Provides
    @Singleton
    ConnectionFactory connectionFactory(EmbeddedActiveMQ embeddedActiveMQ) {
        return embeddedActiveMQ.getConnectionFactory();
    }

    @Provides
    @Singleton
    MailQueueFactory<? extends ManageableMailQueue> manageableMailQueueFactory(ActiveMQMailQueueFactory factory) {
        factory.setUseJMX(true);
        factory.init();
        return factory;
    }

    @Provides
    @Singleton
    MailQueueFactory<?> mailQueueFactory(MailQueueFactory<? extends ManageableMailQueue> factory) {
        return factory;
    }

    @Provides
    @Singleton
    MailQueueFactory<? extends MailQueue> mailQueueFactoryGenerics(ActiveMQMailQueueFactory factory) {
        return factory;
    }

    @ProvidesIntoSet
    InitializationOperation startMetricCollector(ActiveMQMetricCollector metricCollector) {
        return InitilizationOperationBuilder
            .forClass(ActiveMQMetricCollector.class)
            .init(metricCollector::start);
    }
}
