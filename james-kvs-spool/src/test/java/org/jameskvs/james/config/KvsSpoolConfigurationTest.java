package org.jameskvs.james.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.jameskvs.client.ClientTls;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KvsSpoolConfigurationTest {

    @Test
    void defaultsWhenTheFileIsAbsent(@TempDir Path conf) {
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.load(conf);

        assertThat(configuration.servers()).containsExactly("localhost:7400");
        assertThat(configuration.user()).isEqualTo("james");
        assertThat(configuration.tls().enabled()).isFalse();
        assertThat(configuration.maxInFlight()).isEqualTo(1024);
        assertThat(configuration.requestTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(configuration.readAheadWindow()).isEqualTo(64);
        assertThat(configuration.readBlockSize()).isEqualTo(32);
        assertThat(configuration.nodeId()).isEqualTo(HostName.asNodeId()).isNotBlank();
        assertThat(configuration.ownerName()).isEqualTo(configuration.nodeId());
        assertThat(configuration.epoch()).isEqualTo(1);
        assertThat(configuration.mailQueuePrefix()).isEqualTo(configuration.nodeId() + "/queue/");
        assertThat(configuration.mailRepositoryPrefix()).isEqualTo(configuration.nodeId() + "/repo/");
        assertThat(configuration.adoptionEnabled()).as("no replication, no leases: no adoption").isFalse();
        assertThat(configuration.orSetRepositories()).isEmpty();
        assertThat(configuration.isOrSetRepository("kvs://var/mail/error/")).isFalse();
    }

    @Test
    void theNodeIdNamesOwnerAndNamespaceUnlessTheyAreSet(@TempDir Path conf) throws Exception {
        Files.writeString(conf.resolve("kvs-spool.properties"), "nodeId=mx-2\nreplication.nodes=a,b\n");
        KvsSpoolConfiguration byId = KvsSpoolConfiguration.load(conf);
        assertThat(byId.ownerName()).isEqualTo("mx-2");
        assertThat(byId.mailQueuePrefix()).isEqualTo("mx-2/queue/");
        assertThat(byId.adoptionEnabled()).isTrue();

        Files.writeString(conf.resolve("kvs-spool.properties"), "nodeId=mx-2\nownerName=o\nnamespace=n\n");
        KvsSpoolConfiguration explicit = KvsSpoolConfiguration.load(conf);
        assertThat(explicit.ownerName()).isEqualTo("o");
        assertThat(explicit.mailQueuePrefix()).isEqualTo("n/queue/");

        Files.writeString(conf.resolve("kvs-spool.properties"), "nodeId=a/b");
        assertThatThrownBy(() -> KvsSpoolConfiguration.load(conf)).hasMessageContaining("nodeId");
    }

    @Test
    void aHostNameBecomesANodeIdWithoutSlashesOrSpaces() {
        assertThat(HostName.sanitized("mx 1/eu:west")).isEqualTo("mx-1-eu-west");
        assertThat(HostName.sanitized("mail-2.example.org")).isEqualTo("mail-2.example.org");
    }

    @Test
    void orSetRepositoriesAreChosenByUrlPrefix(@TempDir Path conf) throws Exception {
        Files.writeString(conf.resolve("kvs-spool.properties"),
            "repository.orset = kvs://var/mail/error/ , kvs://var/mail/cluster-");

        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.load(conf);

        assertThat(configuration.orSetRepositories()).containsExactly("kvs://var/mail/error/", "kvs://var/mail/cluster-");
        assertThat(configuration.isOrSetRepository("kvs://var/mail/error/")).isTrue();
        assertThat(configuration.isOrSetRepository("kvs://var/mail/cluster-a/")).isTrue();
        assertThat(configuration.isOrSetRepository("kvs://var/mail/relay-denied/")).isFalse();
    }

    @Test
    void readsEveryKeyFromKvsSpoolProperties(@TempDir Path conf) throws Exception {
        Files.writeString(conf.resolve("kvs-spool.properties"), String.join("\n",
            "servers = kvs1:7400, kvs2:7400", "user=u", "password=p", "tls=true", "maxInFlight=10",
            "requestTimeout=1500", "readAheadWindow=8", "readBlockSize=4", "readBlockBytes=1024",
            "idlePollInterval=250", "ownerName=node-a", "epoch=7", "namespace=prod"));

        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.load(conf);

        assertThat(configuration.servers()).isEqualTo(List.of("kvs1:7400", "kvs2:7400"));
        assertThat(configuration.password()).isEqualTo("p");
        assertThat(configuration.tls().enabled()).isTrue();
        assertThat(configuration.requestTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(configuration.readBlockBytes()).isEqualTo(1024);
        assertThat(configuration.idlePollInterval()).isEqualTo(Duration.ofMillis(250));
        assertThat(configuration.epoch()).isEqualTo(7);
        assertThat(configuration.mailQueuePrefix()).isEqualTo("prod/queue/");
    }

    @Test
    void readsTheTlsKeysAndRefusesTlsSettingsThatWouldBeIgnored(@TempDir Path conf) throws Exception {
        Files.writeString(conf.resolve("kvs-spool.properties"), String.join("\n", "tls=true",
            "tls.trustCertificates=/etc/kvs/ca.pem", "tls.certChain=/etc/kvs/client.pem", "tls.privateKey=/etc/kvs/client.key"));
        ClientTls tls = KvsSpoolConfiguration.load(conf).tls();
        assertThat(tls.enabled()).isTrue();
        assertThat(tls.trustCertificates()).isEqualTo(Path.of("/etc/kvs/ca.pem"));
        assertThat(tls.certChain()).isEqualTo(Path.of("/etc/kvs/client.pem"));
        assertThat(tls.privateKey()).isEqualTo(Path.of("/etc/kvs/client.key"));

        Files.writeString(conf.resolve("kvs-spool.properties"), "tls=false\ntls.trustCertificates=/etc/kvs/ca.pem");
        assertThatThrownBy(() -> KvsSpoolConfiguration.load(conf)).hasMessageContaining("tls=true");
        Files.writeString(conf.resolve("kvs-spool.properties"), "tls=true\ntls.certChain=/etc/kvs/client.pem");
        assertThatThrownBy(() -> KvsSpoolConfiguration.load(conf)).hasMessageContaining("tls.privateKey");
    }

    @Test
    void rejectsNonsense(@TempDir Path conf) throws Exception {
        Files.writeString(conf.resolve("kvs-spool.properties"), "readAheadWindow=0");
        assertThatThrownBy(() -> KvsSpoolConfiguration.load(conf)).hasMessageContaining("readAheadWindow");
        Files.writeString(conf.resolve("kvs-spool.properties"), "namespace=a/b");
        assertThatThrownBy(() -> KvsSpoolConfiguration.load(conf)).hasMessageContaining("namespace");
    }
}
