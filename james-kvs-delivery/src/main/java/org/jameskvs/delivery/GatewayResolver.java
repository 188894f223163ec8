package org.jameskvs.delivery;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Gateway mode ({@code gateway}, {@code gatewayPort}): every domain's mail goes to the gateway hosts,
 * in the order configured, instead of the domain's MX hosts; no MX is looked up. A gateway host name is
 * looked up (through James's DNS with {@link DnsMxResolver}) at each new connection, as RemoteDelivery
 * does. Lanes stay per domain / bucket: {@link #mxGroup} groups nothing.
 */
final class GatewayResolver implements MxResolver {
    private final List<LaneDeliveryConfig.Gateway> gateways;
    private final MxResolver hosts;

    private GatewayResolver(List<LaneDeliveryConfig.Gateway> gateways, MxResolver hosts) {
        this.gateways = List.copyOf(gateways);
        this.hosts = hosts;
    }

    /** What the lanes deliver to under {@code config}: its gateway when one is set, else {@code mx}. */
    static MxResolver forConfig(LaneDeliveryConfig config, MxResolver mx) {
        return config.gatewayMode() ? new GatewayResolver(config.gateways(), mx) : mx;
    }

    @Override
    public List<InetSocketAddress> targets(String domain, int port) throws SmtpFailure {
        List<InetSocketAddress> targets = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        for (LaneDeliveryConfig.Gateway gateway : gateways) {
            try {
                for (InetAddress address : hosts.addressesOf(gateway.host())) {
                    targets.add(new InetSocketAddress(address, gateway.port()));
                }
            } catch (UnknownHostException | RuntimeException e) {
                unknown.add(gateway.host() + " (" + e + ")"); // the next gateway may resolve; the cause is kept for the failure
            }
        }
        if (targets.isEmpty()) {
            throw new SmtpFailure(SmtpReply.noReply("no address for the gateway " + unknown), true, null);
        }
        return targets;
    }

    @Override
    public List<InetAddress> resolve(String domain) throws SmtpFailure {
        return targets(domain, 25).stream().map(InetSocketAddress::getAddress).toList();
    }

    @Override
    public List<InetAddress> addressesOf(String host) throws UnknownHostException {
        return hosts.addressesOf(host);
    }

    @Override
    public String mxGroup(String domain) {
        return domain;
    }

    @Override
    public String toString() {
        return "gateway " + gateways;
    }
}
