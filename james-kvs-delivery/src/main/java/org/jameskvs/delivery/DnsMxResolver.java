package org.jameskvs.delivery;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.apache.james.dnsservice.api.DNSService;
import org.apache.james.dnsservice.api.TemporaryResolutionException;

/**
 * MX lookup through James's {@link DNSService} (so whatever DNS James is configured with, or a test
 * zone bound in its place, decides where mail goes). James returns the MX hosts sorted by preference,
 * or the domain itself when it has no MX record (the implicit MX of RFC 5321 5.1).
 */
public final class DnsMxResolver implements MxResolver {
    private final DNSService dns;

    public DnsMxResolver(DNSService dns) {
        this.dns = dns;
    }

    @Override
    public List<InetAddress> resolve(String domain) throws SmtpFailure {
        Collection<String> hosts;
        try {
            hosts = dns.findMXRecords(domain);
        } catch (TemporaryResolutionException e) {
            throw new SmtpFailure(SmtpReply.noReply("temporary DNS failure for " + domain), true, e);
        }
        List<InetAddress> addresses = new ArrayList<>();
        for (String host : hosts) {
            try {
                addresses.addAll(dns.getAllByName(host));
            } catch (UnknownHostException e) {
                // the next MX host may resolve
            }
        }
        if (addresses.isEmpty()) {
            throw new SmtpFailure(SmtpReply.noReply("no address for the MX of " + domain + " " + hosts), true, null);
        }
        return addresses;
    }

    @Override
    public List<InetAddress> addressesOf(String host) throws UnknownHostException {
        return List.copyOf(dns.getAllByName(host));
    }

    @Override
    public String mxGroup(String domain) {
        try {
            Collection<String> hosts = dns.findMXRecords(domain);
            return hosts.isEmpty() ? domain : hosts.iterator().next().toLowerCase(java.util.Locale.ROOT);
        } catch (TemporaryResolutionException | RuntimeException e) {
            return domain;
        }
    }
}
