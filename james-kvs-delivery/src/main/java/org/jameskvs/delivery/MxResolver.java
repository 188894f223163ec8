package org.jameskvs.delivery;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/** The addresses to deliver a domain's mail to, best MX first. */
public interface MxResolver {

    /** Throws {@link SmtpFailure} (no reply, before greeting) when nothing can be resolved now. */
    List<InetAddress> resolve(String domain) throws SmtpFailure;

    /**
     * Where a new connection for {@code domain}'s mail goes, in the order to try: its MX addresses (see
     * {@link #resolve}) on {@code port}, the {@code port} setting. A gateway ({@link GatewayResolver})
     * answers its own hosts and ports instead.
     */
    default List<InetSocketAddress> targets(String domain, int port) throws SmtpFailure {
        List<InetSocketAddress> targets = new ArrayList<>();
        for (InetAddress address : resolve(domain)) {
            targets.add(new InetSocketAddress(address, port));
        }
        return targets;
    }

    /** The addresses of a host name or literal (a gateway host): here the JVM's lookup. */
    default List<InetAddress> addressesOf(String host) throws UnknownHostException {
        return List.of(InetAddress.getAllByName(host));
    }

    /**
     * The name shared by domains delivered to the same MX: the best MX host (lower case), or the
     * domain itself when it cannot be looked up now. For {@code mxGrouping}.
     */
    default String mxGroup(String domain) {
        return domain;
    }
}
