package org.jameskvs.delivery;

import java.net.InetAddress;
import java.util.List;

/** The addresses to deliver a domain's mail to, best MX first. */
public interface MxResolver {

    /** Throws {@link SmtpFailure} (no reply, before greeting) when nothing can be resolved now. */
    List<InetAddress> resolve(String domain) throws SmtpFailure;

    /**
     * The name shared by domains delivered to the same MX: the best MX host (lower case), or the
     * domain itself when it cannot be looked up now. For {@code mxGrouping}.
     */
    default String mxGroup(String domain) {
        return domain;
    }
}
