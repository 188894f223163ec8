package org.jameskvs.client;

import java.nio.file.Path;
import java.util.Properties;

/**
 * The TLS settings of a KVS client, in one place: every connection a client program makes uses the
 * same ones (the James plug-in: its single-server connection, both paths of every replicated node,
 * the OR-set repository's log readers). Read from properties by {@link #fromProperties}; keys,
 * after an optional prefix, and defaults:
 * <pre>
 * key                    default  meaning
 * tls                    false    connect with TLS; the keys below need it (set without it: refused)
 * tls.trustCertificates  (none)   PEM file of the CA certificates to trust; none = the JDK's default trust store
 * tls.trustAll           false    accept any server certificate, no verification at all: tests only
 * tls.verifyHostname     true     the server certificate must name the host connected to (ignored with trustAll)
 * tls.certChain          (none)   PEM certificate chain presented to a server that asks for one (mutual TLS,
 *                                 the server's tls.clientAuth); needs tls.privateKey
 * tls.privateKey         (none)   PEM PKCS#8 private key of tls.certChain
 * </pre>
 *
 * @param enabled           connect with TLS
 * @param trustAll          accept any server certificate (tests only)
 * @param trustCertificates PEM file of trusted CAs, or null for the JDK's trust store
 * @param verifyHostname    check that the server certificate names the host
 * @param certChain         the client certificate chain (PEM), or null when the client has none
 * @param privateKey        its PEM PKCS#8 private key, or null
 */
public record ClientTls(boolean enabled, boolean trustAll, Path trustCertificates, boolean verifyHostname,
                       Path certChain, Path privateKey) {

    /** Plain TCP. */
    public static final ClientTls OFF = new ClientTls(false, false, null, true, null, null);

    public ClientTls {
        if ((certChain == null) != (privateKey == null)) {
            throw new IllegalArgumentException("tls.certChain and tls.privateKey go together (a client certificate"
                    + " and its key): set both or neither");
        }
        if (!enabled && (trustAll || trustCertificates != null || certChain != null)) {
            throw new IllegalArgumentException("TLS settings are given but tls is not true: set tls=true (or remove"
                    + " tls.trustAll / tls.trustCertificates / tls.certChain)");
        }
    }

    /**
     * Reads the keys of the class comment, each preceded by {@code prefix} (e.g. {@code ""} or
     * {@code "kvs."}).
     *
     * @throws IllegalArgumentException for an inconsistent combination, naming the keys
     */
    public static ClientTls fromProperties(Properties p, String prefix) {
        return new ClientTls(
                Boolean.parseBoolean(p.getProperty(prefix + "tls", "false").trim()),
                Boolean.parseBoolean(p.getProperty(prefix + "tls.trustAll", "false").trim()),
                path(p.getProperty(prefix + "tls.trustCertificates")),
                Boolean.parseBoolean(p.getProperty(prefix + "tls.verifyHostname", "true").trim()),
                path(p.getProperty(prefix + "tls.certChain")),
                path(p.getProperty(prefix + "tls.privateKey")));
    }

    /** TLS trusting the CAs of {@code pemFile}, host name checked, no client certificate. */
    public static ClientTls trusting(Path pemFile) {
        return new ClientTls(true, false, pemFile, true, null, null);
    }

    /** The same settings, presenting this client certificate to servers that ask for one. */
    public ClientTls withClientCertificate(Path chain, Path key) {
        return new ClientTls(enabled, trustAll, trustCertificates, verifyHostname, chain, key);
    }

    private static Path path(String value) {
        return value == null || value.isBlank() ? null : Path.of(value.trim());
    }

    @Override
    public String toString() {
        if (!enabled) {
            return "off";
        }
        return (trustAll ? "trust-all" : "trust=" + (trustCertificates == null ? "jdk" : trustCertificates))
                + (verifyHostname ? "" : ", no host name check")
                + (certChain == null ? "" : ", client certificate " + certChain);
    }
}
