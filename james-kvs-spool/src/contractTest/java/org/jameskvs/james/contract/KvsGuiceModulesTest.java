package org.jameskvs.james.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

import org.apache.james.core.healthcheck.HealthCheck;
import org.apache.james.filesystem.api.FileSystem;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.james.metrics.api.GaugeRegistry;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueItemDecoratorFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.guice.KvsMailQueueModule;
import org.jameskvs.james.health.KvsSpoolHealthCheck;
import org.jameskvs.james.guice.KvsMailRepositoryModule;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.jameskvs.james.repository.KvsMailRepository;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Key;
import com.google.inject.TypeLiteral;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The Guice modules as James uses them, against the test server, configured by conf/kvs-spool.properties. */
class KvsGuiceModulesTest {

    @TempDir
    Path james;

    private Injector injector(com.google.inject.Module module) throws Exception {
        Properties properties = ContractBackends.clientProperties().orElse(null);
        assumeTrue(properties != null, "needs the real server backend");
        properties.setProperty("namespace", "guice-" + UUID.randomUUID());
        File conf = james.resolve("conf").toFile();
        conf.mkdirs();
        try (OutputStream out = new FileOutputStream(new File(conf, "kvs-spool.properties"))) {
            properties.store(out, null);
        }
        FileSystem fileSystem = new ConfOnlyFileSystem(james.toFile());
        return Guice.createInjector(module, new AbstractModule() {
            @Override
            protected void configure() {
                bind(FileSystem.class).toInstance(fileSystem);
                bind(MetricFactory.class).toInstance(new RecordingMetricFactory());
                bind(GaugeRegistry.class).toInstance(new NoopGaugeRegistry());
                bind(MailQueueItemDecoratorFactory.class).to(RawMailQueueItemDecoratorFactory.class);
            }
        });
    }

    @Test
    void queueModuleBindsTheThreeKeysToOneFactoryThatWorks() throws Exception {
        Injector injector = injector(new KvsMailQueueModule());

        MailQueueFactory<?> any = injector.getInstance(Key.get(new TypeLiteral<MailQueueFactory<?>>() { }));
        MailQueueFactory<? extends MailQueue> queues = injector.getInstance(Key.get(new TypeLiteral<MailQueueFactory<? extends MailQueue>>() { }));
        MailQueueFactory<? extends ManageableMailQueue> manageable = injector.getInstance(Key.get(new TypeLiteral<MailQueueFactory<? extends ManageableMailQueue>>() { }));

        assertThat(any).isSameAs(queues).isSameAs(manageable).isInstanceOf(KvsMailQueueFactory.class);
        ManageableMailQueue spool = manageable.createQueue(MailQueueFactory.SPOOL);
        spool.enQueue(Mails.defaultMail().name("via-guice").build());
        assertThat(spool.getSize()).isEqualTo(1);
        MailQueue.MailQueueItem item = Flux.from(spool.deQueue()).blockFirst();
        assertThat(item.getMail().getName()).isEqualTo("via-guice");
        item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
        assertThat(spool.getSize()).isEqualTo(0);

        // The spool's health check joins James's (webadmin's /healthcheck reads this set).
        Set<HealthCheck> checks = injector.getInstance(Key.get(new TypeLiteral<Set<HealthCheck>>() { }));
        HealthCheck spoolCheck = checks.stream().filter(KvsSpoolHealthCheck.class::isInstance).findFirst().orElseThrow();
        assertThat(Mono.from(spoolCheck.check()).block().isHealthy()).isTrue();

        ((KvsMailQueueFactory) any).stop();
        injector.getInstance(KvsQueues.class).close();
    }

    @Test
    void repositoryIsConstructedByGuiceWithItsUrl() throws Exception {
        Injector parent = injector(new KvsMailRepositoryModule());
        MailRepositoryUrl url = MailRepositoryUrl.from("kvs://var/mail/error/");
        Injector child = parent.createChildInjector(binder -> binder.bind(MailRepositoryUrl.class).toInstance(url));

        KvsMailRepository repository = child.getInstance(KvsMailRepository.class);
        repository.store(Mails.defaultMail().name("in-repo").build());

        KvsMailRepository again = child.getInstance(KvsMailRepository.class);
        assertThat(again.size()).isEqualTo(1);
        assertThat(again.retrieve(new org.apache.james.mailrepository.api.MailKey("in-repo")).getName()).isEqualTo("in-repo");
        parent.getInstance(KvsQueues.class).close();
    }

    /** The part of James's FileSystem the module uses: file://conf/ under a James home. */
    private static final class ConfOnlyFileSystem implements FileSystem {
        private final File home;

        ConfOnlyFileSystem(File home) {
            this.home = home;
        }

        @Override
        public InputStream getResource(String url) {
            throw new UnsupportedOperationException(url);
        }

        @Override
        public File getFile(String fileURL) throws FileNotFoundException {
            if (!fileURL.startsWith(FILE_PROTOCOL_AND_CONF)) {
                throw new FileNotFoundException(fileURL);
            }
            return new File(new File(home, "conf"), fileURL.substring(FILE_PROTOCOL_AND_CONF.length()));
        }

        @Override
        public File getBasedir() {
            return home;
        }
    }
}
