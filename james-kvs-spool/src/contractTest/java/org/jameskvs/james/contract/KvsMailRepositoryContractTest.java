package org.jameskvs.james.contract;

import org.apache.james.mailrepository.MailRepositoryContract;
import org.apache.james.mailrepository.api.MailRepository;
import org.apache.james.mailrepository.api.MailRepositoryPath;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.repository.KvsMailRepository;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

class KvsMailRepositoryContractTest implements MailRepositoryContract {
    private KvsQueues queues;

    @BeforeEach
    void setUp() {
        queues = KvsBackend.freshNamespace();
    }

    @AfterEach
    void tearDown() {
        queues.close();
    }

    @Override
    public MailRepository retrieveRepository() {
        return retrieveRepository(MailRepositoryPath.from("var/mail/error"));
    }

    @Override
    public MailRepository retrieveRepository(MailRepositoryPath path) {
        return new KvsMailRepository(queues, MailRepositoryUrl.fromPathAndProtocol(path, "kvs"));
    }
}
