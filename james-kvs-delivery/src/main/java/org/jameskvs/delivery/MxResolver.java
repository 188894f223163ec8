package org.jameskvs.delivery;

import java.net.InetAddress;
import java.util.List;

/** The addresses to deliver a domain's mail to, best MX first. */
public interface MxResolver {

    /** Throws {@link SmtpFailure} (no reply, before greeting) when nothing can be resolved now. */
    List<InetAddress> resolve(String domain) throws SmtpFailure;
}
