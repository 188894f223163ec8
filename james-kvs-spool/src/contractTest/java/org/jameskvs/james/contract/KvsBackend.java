package org.jameskvs.james.contract;

import java.util.Properties;
import java.util.UUID;

import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/**
 * What the contract tests run against. Each test gets its own namespace on the shared backend, so
 * tests are isolated without restarting anything.
 */
public final class KvsBackend {
    private static final KvsQueueOpener OPENER = ContractBackends.opener();

    private KvsBackend() {
    }

    public static KvsQueues freshNamespace() {
        Properties properties = new Properties();
        properties.setProperty("namespace", "test-" + UUID.randomUUID());
        properties.setProperty("idlePollInterval", "200");
        properties.setProperty("requestTimeout", "10000");
        return new KvsQueues(OPENER, KvsSpoolConfiguration.from(properties));
    }
}
