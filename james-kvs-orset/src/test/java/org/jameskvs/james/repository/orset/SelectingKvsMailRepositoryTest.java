package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import java.util.UUID;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.repository.KvsMailRepository;
import org.jameskvs.james.repository.SelectingKvsMailRepository;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.google.inject.Guice;
import com.google.inject.Injector;

/**
 * {@code repository.orset} selects the OR-set implementation for matching URLs, as James builds a
 * repository: Guice, with the URL bound in a child injector.
 */
class SelectingKvsMailRepositoryTest {
    @RegisterExtension
    static final OrSetTestKvs kvs = new OrSetTestKvs();

    @Test
    void orSetForConfiguredUrlsPlainRepositoryForTheOthers() throws Exception {
        OrSetTestKvs.Node node = kvs.node("select-" + UUID.randomUUID(), "node-a");
        Properties p = node.queues().configuration().properties();
        p.setProperty("repository.orset", "kvs://var/mail/error/");
        KvsQueues queues = new KvsQueues(node.opener(), KvsSpoolConfiguration.from(p));
        Injector parent = Guice.createInjector(binder -> {
            binder.bind(KvsQueues.class).toInstance(queues);
            binder.bind(KvsQueueOpener.class).toInstance(node.opener());
        });

        SelectingKvsMailRepository error = build(parent, "kvs://var/mail/error/");
        SelectingKvsMailRepository other = build(parent, "kvs://var/mail/relay-denied/");

        assertThat(error.delegate()).isInstanceOf(OrSetMailRepository.class);
        assertThat(((OrSetMailRepository) error.delegate()).nodeId()).isEqualTo("node-a");
        assertThat(other.delegate()).isInstanceOf(KvsMailRepository.class);
        MailKey key = error.store(OrSetMailRepositoryConvergenceTest.mail("m1", "hello"));
        assertThat(error.size()).isEqualTo(1);
        assertThat(error.retrieve(key).getName()).isEqualTo("m1");
        error.remove(key);
        assertThat(error.size()).isZero();
        assertThat(other.size()).isZero();
        error.close();
        queues.close();
    }

    private static SelectingKvsMailRepository build(Injector parent, String url) {
        MailRepositoryUrl repositoryUrl = MailRepositoryUrl.from(url);
        return parent.createChildInjector(binder -> binder.bind(MailRepositoryUrl.class).toInstance(repositoryUrl))
            .getInstance(SelectingKvsMailRepository.class);
    }
}
