package org.jameskvs.james.repository;

import java.util.Collection;
import java.util.Iterator;

import javax.inject.Inject;
import javax.mail.MessagingException;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepository;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.mailet.Mail;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.repository.orset.OrSetMailRepository;

/**
 * The class to register for the {@code kvs} protocol in {@code mailrepositorystore.xml}: for each
 * repository URL James asks for, an {@link OrSetMailRepository} when the URL matches
 * {@code repository.orset} of {@code kvs-spool.properties} (a repository every James node writes at
 * once, e.g. the error repository of a cluster), else a {@link KvsMailRepository}. James builds one
 * instance per URL through Guice (the URL bound in a child injector).
 */
public class SelectingKvsMailRepository implements MailRepository, AutoCloseable {
    private final MailRepository delegate;

    @Inject
    public SelectingKvsMailRepository(KvsQueues queues, KvsQueueOpener opener, MailRepositoryUrl url) {
        this.delegate = queues.configuration().isOrSetRepository(url.asString())
            ? new OrSetMailRepository(queues, opener, url)
            : new KvsMailRepository(queues, url);
    }

    /** The implementation chosen for this URL. */
    public MailRepository delegate() {
        return delegate;
    }

    @Override
    public long size() throws MessagingException {
        return delegate.size();
    }

    @Override
    public MailKey store(Mail mail) throws MessagingException {
        return delegate.store(mail);
    }

    @Override
    public Iterator<MailKey> list() throws MessagingException {
        return delegate.list();
    }

    @Override
    public Mail retrieve(MailKey key) throws MessagingException {
        return delegate.retrieve(key);
    }

    @Override
    public void remove(MailKey key) throws MessagingException {
        delegate.remove(key);
    }

    @Override
    public void remove(Collection<MailKey> keys) throws MessagingException {
        delegate.remove(keys);
    }

    @Override
    public void removeAll() throws MessagingException {
        delegate.removeAll();
    }

    @Override
    public void close() throws Exception {
        if (delegate instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }
}
