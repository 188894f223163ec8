package org.jameskvs.server;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Set;

/**
 * The server's password rule: a password is always required, and a sample or obvious one (the
 * {@code changeme} of old sample configurations, {@code password}, the user name, ...) is accepted
 * only while the server listens on loopback, where no other machine can try it.
 */
final class ListenPassword {
    /** Passwords anyone would try first; compared ignoring case and surrounding blanks. */
    private static final Set<String> SAMPLES = Set.of("changeme", "change-me", "change_me", "password", "passw0rd",
            "secret", "james", "kvs", "admin", "root", "guest", "test", "default", "123456", "12345678",
            "qwerty", "letmein");

    private ListenPassword() {
    }

    /** @throws IllegalArgumentException naming the key, when {@code password} may not serve on {@code listenHost} */
    static void check(String password, String user, String listenHost) {
        if (password == null || password.isEmpty()) {
            throw new IllegalArgumentException("auth.password (or auth.passwordFile) must be set");
        }
        if (isSample(password, user) && !isLoopback(listenHost)) {
            throw new IllegalArgumentException("auth.password is a sample or obvious password, refused while "
                    + "listen.host=" + listenHost + " is reachable from other machines: set auth.password (or "
                    + "auth.passwordFile) to a secret of your own, e.g. from: head -c 24 /dev/urandom | base64");
        }
    }

    static boolean isSample(String password, String user) {
        String p = password.strip().toLowerCase(Locale.ROOT);
        return SAMPLES.contains(p) || p.equalsIgnoreCase(user);
    }

    /** True when every address the host name stands for is a loopback address; an unknown name is not. */
    static boolean isLoopback(String host) {
        try {
            for (InetAddress address : InetAddress.getAllByName(host)) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
