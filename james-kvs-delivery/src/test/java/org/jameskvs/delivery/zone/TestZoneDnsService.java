package org.jameskvs.delivery.zone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.james.dnsservice.api.DNSService;

/**
 * James's DNS service in the tests: a test zone read from {@code conf/test-zone.properties} in James's
 * working directory ({@code domain=127.0.0.x} per line). A zone domain is its own MX host
 * (the implicit MX) at that address; any other name is resolved by the JVM (loopback names only on
 * these machines, whose resolver is not reachable), and has no TXT record.
 */
public final class TestZoneDnsService implements DNSService {
    public static final String ZONE_FILE = "test-zone.properties";

    private final Map<String, InetAddress> zone = new TreeMap<>();

    public TestZoneDnsService() {
        String workingDirectory = System.getProperty("working.directory");
        if (workingDirectory == null) {
            throw new IllegalStateException("-Dworking.directory must name James's working directory (holding conf/" + ZONE_FILE + ")");
        }
        Path file = Path.of(workingDirectory, "conf", ZONE_FILE);
        Properties properties = new Properties();
        try (var reader = Files.newBufferedReader(file)) {
            properties.load(reader);
            for (String domain : properties.stringPropertyNames()) {
                zone.put(domain.toLowerCase(Locale.ROOT), InetAddress.getByName(properties.getProperty(domain).strip()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the test zone " + file, e);
        }
    }

    @Override
    public Collection<String> findMXRecords(String hostname) {
        return List.of(hostname.toLowerCase(Locale.ROOT));
    }

    @Override
    public Collection<String> findTXTRecords(String hostname) {
        return List.of();
    }

    @Override
    public Collection<InetAddress> getAllByName(String name) throws UnknownHostException {
        return List.of(getByName(name));
    }

    @Override
    public InetAddress getByName(String name) throws UnknownHostException {
        InetAddress address = zone.get(name.toLowerCase(Locale.ROOT));
        return address != null ? address : InetAddress.getByName(name);
    }

    @Override
    public InetAddress getLocalHost() {
        return InetAddress.getLoopbackAddress();
    }

    @Override
    public String getHostName(InetAddress address) {
        return address.getHostAddress();
    }
}
