package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.apache.james.mailrepository.MailRepositoryContract;
import org.apache.james.mailrepository.api.MailRepository;
import org.apache.james.mailrepository.api.MailRepositoryPath;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** James's MailRepositoryContract (3.8.1) for a single-node OR-set repository on a real KVS server. */
class OrSetMailRepositoryContractTest implements MailRepositoryContract {
    @RegisterExtension
    static final OrSetTestKvs kvs = new OrSetTestKvs();
    private OrSetTestKvs.Node node;
    private final List<OrSetMailRepository> repositories = new ArrayList<>();

    @BeforeEach
    void setUp() {
        node = kvs.node("orset-" + UUID.randomUUID(), "node1");
    }

    @AfterEach
    void tearDown() {
        repositories.forEach(OrSetMailRepository::close);
    }

    @Override
    public MailRepository retrieveRepository() {
        return retrieveRepository(MailRepositoryPath.from("var/mail/error"));
    }

    @Override
    public MailRepository retrieveRepository(MailRepositoryPath path) {
        OrSetMailRepository repository = new OrSetMailRepository(node.queues(), node.opener(),
            MailRepositoryUrl.fromPathAndProtocol(path, "kvs"), node.id(),
            new OrSetMailRepository.Options(true, Duration.ofMillis(200), Duration.ofMinutes(5)), System::currentTimeMillis);
        repositories.add(repository);
        return repository;
    }
}
