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
        if (!config.tls()) {
            return null;
        }
        SslContextBuilder builder = SslContextBuilder.forClient();
        if (config.tlsTrustAll()) {
            builder.trustManager(InsecureTrustManagerFactory.INSTANCE);
        } else if (config.tlsTrustCertificates() != null) {
            builder.trustManager(config.tlsTrustCertificates().toFile());
        }
        try {
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("bad TLS settings: " + e.getMessage(), e);
        }
    }

    static SslHandler newHandler(SslContext context, ByteBufAllocator alloc, KvsClientConfig config) {
        SslHandler handler = context.newHandler(alloc, config.host(), config.port());
        if (!config.tlsTrustAll() && config.tlsVerifyHostname()) {
            SSLEngine engine = handler.engine();
            SSLParameters params = engine.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(params);
        }
        handler.setHandshakeTimeoutMillis(config.connectTimeout().toMillis());
        return handler;
    }
}
