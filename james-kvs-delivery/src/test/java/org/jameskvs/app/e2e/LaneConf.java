package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.JamesConf;

/** james-conf rewritten for LaneDelivery: it replaces RemoteDelivery in the relay processor; /lanes is served. */
final class LaneConf {
    private LaneConf() {
    }

    /** {@code parameters}: the mailet's parameter elements, e.g. {@code <buckets>8</buckets>}. */
    static JamesConf laneDelivery(JamesConf conf, String... parameters) {
        StringBuilder mailet = new StringBuilder("<processor state=\"relay\" enableJmx=\"true\">\n"
            + "            <mailet match=\"All\" class=\"org.jameskvs.delivery.LaneDelivery\">\n");
        for (String parameter : parameters) {
            mailet.append("                ").append(parameter).append('\n');
        }
        mailet.append("            </mailet>");
        return conf
            .removeAll("mailetcontainer.xml", "(?s)<mailet match=\"All\" class=\"RemoteDelivery\">.*?</mailet>")
            .replace("mailetcontainer.xml", "<processor state=\"relay\" enableJmx=\"true\">", mailet.toString())
            .replace("webadmin.properties", "extensions.routes=org.apache.james.webadmin.dropwizard.MetricsRoutes",
                "extensions.routes=org.apache.james.webadmin.dropwizard.MetricsRoutes,org.jameskvs.delivery.LaneRoutes");
    }

    /** LaneBacklogHook in the SMTP handler chain with these water marks. */
    static JamesConf backlogHook(JamesConf conf, long high, long low) {
        return conf.replace("smtpserver.xml", "<handler class=\"org.jameskvs.james.smtp.SpoolSizeLimitHook\"/>",
            "<handler class=\"org.jameskvs.james.smtp.SpoolSizeLimitHook\"/>\n"
                + "            <handler class=\"org.jameskvs.delivery.LaneBacklogHook\">\n"
                + "                <laneHighWater>" + high + "</laneHighWater>\n"
                + "                <laneLowWater>" + low + "</laneLowWater>\n"
                + "            </handler>");
    }
}
