package org.jameskvs.server;

/** JVM flags Chronicle Queue needs, for server processes started by tests. */
final class ChronicleFlags {
    static final String JDK17 = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED "
            + "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
            + "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED "
            + "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED "
            + "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED "
            + "-Dchronicle.analytics.disable=true";

    private ChronicleFlags() {
    }
}
