package org.jameskvs.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The README promises every configuration key with its default. This test reads the keys where the
 * code reads them (the config classes' sources) and checks that the README's Configuration section
 * names each one and, where the code's default is a plain literal, gives that same default.
 *
 * <p>A README row names several keys as {@code `a` / `b`} with their defaults as {@code `1` / `2`};
 * a key may be shortened after its first dotted part ({@code `replication.x` / `y`}).
 */
class ReadmeConfigurationTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** Key and default (null when the code's default is not a plain literal, or there is none). */
    private record Key(String name, String defaultValue) { }

    @Test
    void everyServerKeyIsInTheReadmeWithItsDefault() throws IOException {
        List<Key> keys = keys("kvs-server/src/main/java/org/jameskvs/server/ServerConfig.java",
            "getProperty\\(\"([^\"]+)\"(?:,\\s*\"([^\"]*)\")?\\)", "");
        assertThat(keys).extracting(Key::name).contains("listen.port", "fsync.policy", "shutdown.graceMillis");
        assertDocumented(keys);
    }

    @Test
    void everyPluginKeyIsInTheReadmeWithItsDefault() throws IOException {
        List<Key> keys = new ArrayList<>();
        keys.addAll(keys("james-kvs-spool/src/main/java/org/jameskvs/james/config/KvsSpoolConfiguration.java",
            "(?:getProperty|positiveInt)\\((?:p,\\s*)?\"([^\"]+)\"(?:,\\s*\"?([0-9_a-zA-Z:.]*)\"?(?=\\)))?", ""));
        keys.addAll(keys("kvs-client/src/main/java/org/jameskvs/client/ClientTls.java",
            "getProperty\\(prefix \\+ \"([^\"]+)\"(?:,\\s*\"([^\"]*)\")?\\)", ""));
        keys.addAll(keys("kvs-replication/src/main/java/org/jameskvs/replication/ReplicationConfig.java",
            "getProperty\\(\"(replication\\.[^\"]+)\"(?:,\\s*\"([^\"]*)\")?", ""));
        keys.addAll(keys("kvs-replication/src/main/java/org/jameskvs/replication/ReplicationConfig.java",
            "millis\\(p,\\s*\"([^\"]+)\",\\s*([0-9_]+)\\)", "replication."));
        assertThat(keys).extracting(Key::name).contains("maxInFlight", "tls.verifyHostname",
            "replication.nodes", "replication.leaseTimeoutMillis", "replication.catchUpLogEntries");
        assertDocumented(keys);
        assertThat(configurationSection()).contains("`replication.node.NAME.active` / `.standby`");
    }

    private static void assertDocumented(List<Key> keys) throws IOException {
        String section = configurationSection();
        for (Key key : keys) {
            String row = rowOf(section, key.name());
            assertThat(row).as("README's Configuration section names `%s`", key.name()).isNotNull();
            if (key.defaultValue() == null || key.defaultValue().isEmpty()) {
                continue;
            }
            String documented = documentedDefault(row, key.name());
            if (documented != null && documented.startsWith("`") && documented.endsWith("`")) {
                assertThat(documented.substring(1, documented.length() - 1))
                    .as("README's default of `%s`", key.name())
                    .isEqualToIgnoringCase(key.defaultValue().replace("_", ""));
            }
        }
    }

    private static List<Key> keys(String source, String regex, String prefix) throws IOException {
        String code = Files.readString(ROOT.resolve(source));
        Map<String, Key> keys = new LinkedHashMap<>();
        Matcher m = Pattern.compile(regex).matcher(code);
        while (m.find()) {
            String name = prefix + m.group(1);
            if (name.endsWith(".")) {
                continue; // a key built around a name (replication.node.NAME.active): checked by the caller
            }
            String def = m.groupCount() >= 2 ? m.group(2) : null;
            keys.putIfAbsent(name, new Key(name, def));
        }
        assertThat(keys).as("keys read in %s", source).isNotEmpty();
        return new ArrayList<>(keys.values());
    }

    private static String configurationSection() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        int start = readme.indexOf("\n## Configuration");
        assertThat(start).as("README has a Configuration section").isPositive();
        int end = readme.indexOf("\n## ", start + 1);
        return readme.substring(start, end < 0 ? readme.length() : end);
    }

    /** The table row naming the key in its first cell, in full or shortened after its first part. */
    private static String rowOf(String section, String key) {
        for (String line : section.split("\n")) {
            if (line.startsWith("| ") && keyIndex(firstCell(line), key) >= 0) {
                return line;
            }
        }
        return null;
    }

    private static String documentedDefault(String row, String key) {
        String[] cells = row.split("\\|");
        String[] names = cells[1].trim().split(" / ");
        String[] defaults = cells[2].trim().split(" / ");
        int i = keyIndex(cells[1], key);
        return i >= 0 && names.length == defaults.length ? defaults[i].trim() : null;
    }

    private static String firstCell(String row) {
        return row.split("\\|")[1];
    }

    private static int keyIndex(String cell, String key) {
        String[] names = cell.trim().split(" / ");
        String shortName = key.contains(".") ? key.substring(key.indexOf('.') + 1) : key;
        for (int i = 0; i < names.length; i++) {
            String n = names[i].trim();
            if (n.equals("`" + key + "`") || (i > 0 && n.equals("`" + shortName + "`"))) {
                return i;
            }
        }
        return -1;
    }
}
