package org.jameskvs.delivery.zone;

import java.util.List;

import org.apache.james.dnsservice.api.DNSService;
import org.jameskvs.app.KvsMemoryJamesServerMain;
import org.jameskvs.james.guice.KvsMailQueueModule;

import com.google.inject.AbstractModule;

/**
 * The KVS James memory app (org.jameskvs.app.KvsMemoryJamesServerMain) with James's DNS service
 * replaced by the test zone, so that LaneDelivery finds each test domain's MX on its own loopback
 * address. Test code only.
 */
public final class TestZoneJamesMain {
    private TestZoneJamesMain() {
    }

    public static void main(String[] args) throws Exception {
        AbstractModule testZone = new AbstractModule() {
            @Override
            protected void configure() {
                bind(DNSService.class).to(TestZoneDnsService.class).in(com.google.inject.Scopes.SINGLETON);
            }
        };
        KvsMemoryJamesServerMain.start("kvs (test DNS zone)", List.of(new KvsMailQueueModule(), testZone), args);
    }
}
