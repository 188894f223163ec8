package org.jameskvs.client;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/** The client's TLS context, built once per client from its configuration. */
final class TlsContexts {
    private TlsContexts() {
    }

    /** @return null when TLS is off */
    static SslContext forClient(KvsClientConfig config) {
        ClientTls tls = config.tls();
        if (!tls.enabled()) {
            return null;
        }
        try {
            SslContextBuilder builder = SslContextBuilder.forClient();
            if (tls.trustAll()) {
                builder.trustManager(InsecureTrustManagerFactory.INSTANCE);
            } else if (tls.trustCertificates() != null) {
                builder.trustManager(tls.trustCertificates().toFile());
            }
            if (tls.certChain() != null) {
                builder.keyManager(tls.certChain().toFile(), tls.privateKey().toFile());
            }
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("bad TLS settings (" + tls + "): " + e.getMessage(), e);
        }
    }

    static SslHandler newHandler(SslContext context, ByteBufAllocator alloc, KvsClientConfig config) {
        SslHandler handler = context.newHandler(alloc, config.host(), config.port());
        if (!config.tls().trustAll() && config.tls().verifyHostname()) {
            SSLEngine engine = handler.engine();
            SSLParameters params = engine.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(params);
        }
        handler.setHandshakeTimeoutMillis(config.connectTimeout().toMillis());
        return handler;
    }
}
