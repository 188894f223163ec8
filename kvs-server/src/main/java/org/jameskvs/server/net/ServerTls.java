package org.jameskvs.server.net;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.jameskvs.server.ServerConfig;

import javax.net.ssl.SSLException;

/** The server's TLS context from its {@code tls.*} settings: its certificate and, with mutual TLS, the client CAs. */
final class ServerTls {
    private ServerTls() {
    }

    /** @return null when {@code tls.enabled=false} */
    static SslContext context(ServerConfig config) throws SSLException {
        if (!config.tlsEnabled()) {
            return null;
        }
        SslContextBuilder builder = SslContextBuilder.forServer(config.tlsCertChain().toFile(),
                config.tlsPrivateKey().toFile());
        switch (config.tlsClientAuth()) {
            case NONE -> builder.clientAuth(ClientAuth.NONE);
            case OPTIONAL -> builder.clientAuth(ClientAuth.OPTIONAL).trustManager(config.tlsTrustCertificates().toFile());
            case REQUIRE -> builder.clientAuth(ClientAuth.REQUIRE).trustManager(config.tlsTrustCertificates().toFile());
        }
        return builder.build();
    }
}
