package org.jameskvs.james.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.Test;

/**
 * The size limits shipped in conf/ (KVS server) and james-conf/ (James with the plug-in) agree: the
 * plug-in's frameMaxBytes is the servers' frame.maxBytes, and James's SMTP maxmessagesize is set and
 * below what the spool stores, so an oversized message is refused (552) by James itself, and the
 * plug-in's hook is in the handler chain for any other configuration.
 */
class ShippedSizeLimitsAgreeTest {
    private static final Path REPOSITORY = Path.of("..");

    @Test
    void theSpoolsFrameLimitIsTheServers() throws Exception {
        KvsSpoolConfiguration spool = KvsSpoolConfiguration.load(REPOSITORY.resolve("james-conf"));
        Properties server = properties(REPOSITORY.resolve("conf/kvs-server.properties"));

        assertThat(spool.frameMaxBytes()).isEqualTo(Integer.parseInt(server.getProperty("frame.maxBytes")));
        assertThat(KvsSpoolConfiguration.defaults().frameMaxBytes())
            .isEqualTo(ServerConfig.forTest(Path.of("unused"), "unused").maxFrameBytes());
    }

    @Test
    void jamesRefusesWhatTheSpoolCannotStore() throws Exception {
        KvsSpoolConfiguration spool = KvsSpoolConfiguration.load(REPOSITORY.resolve("james-conf"));
        String smtp = Files.readString(REPOSITORY.resolve("james-conf/smtpserver.xml"));
        Matcher maxMessageSize = Pattern.compile("<maxmessagesize>(\\d+)</maxmessagesize>").matcher(smtp);
        assertThat(maxMessageSize.find()).as("smtpserver.xml sets maxmessagesize in KB").isTrue();
        long bytes = Long.parseLong(maxMessageSize.group(1)) * 1024;

        assertThat(bytes).isPositive().isLessThanOrEqualTo(spool.maxSmtpMessageBytes());
        assertThat(smtp).contains("<handler class=\"org.jameskvs.james.smtp.SpoolSizeLimitHook\"/>");
    }

    private static Properties properties(Path file) throws Exception {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        }
        return properties;
    }
}
