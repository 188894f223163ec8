package org.jameskvs.delivery;

import java.time.Clock;

import javax.inject.Inject;
import javax.mail.MessagingException;

import org.apache.james.dnsservice.api.DNSService;
import org.apache.james.metrics.api.GaugeRegistry;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.mailet.Mail;
import org.apache.mailet.base.GenericMailet;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/**
 * Destination-aware remote delivery, in place of RemoteDelivery in the relay processor:
 *
 * <pre>
 * &lt;mailet match="All" class="org.jameskvs.delivery.LaneDelivery"&gt;
 *     &lt;dedicatedDomains&gt;gmail.com, yahoo.com&lt;/dedicatedDomains&gt;
 *     &lt;buckets&gt;64&lt;/buckets&gt;
 *     &lt;concurrency&gt;4&lt;/concurrency&gt;
 * &lt;/mailet&gt;
 * </pre>
 *
 * With {@code <gateway>smarthost.example.net</gateway>} (and {@code <gatewayPort>}, as RemoteDelivery's) every
 * lane delivers to the gateway instead of its domain's MX hosts.
 * Every key, with its default, is in {@link LaneDeliveryConfig}. The mail is stored in its recipient
 * domains' lane queues (see {@link LaneSpool}) and then leaves the processor (state GHOST); a failure
 * to store it throws, so James keeps it.
 */
public class LaneDelivery extends GenericMailet {
    private final MailQueueFactory<?> queueFactory;
    private final DNSService dns;
    private final LaneRegistry registry;
    private final GaugeRegistry gauges;
    private final KvsSpoolConfiguration kvs;
    private LaneSpool spool;

    @Inject
    public LaneDelivery(MailQueueFactory<?> queueFactory, DNSService dns, LaneRegistry registry, GaugeRegistry gauges,
                        KvsSpoolConfiguration kvs) {
        this.queueFactory = queueFactory;
        this.dns = dns;
        this.registry = registry;
        this.gauges = gauges;
        this.kvs = kvs;
    }

    @Override
    public void init() throws MessagingException {
        LaneDeliveryConfig config;
        try {
            config = LaneDeliveryConfig.from(this::getInitParameter);
        } catch (IllegalArgumentException e) {
            throw new MessagingException("LaneDelivery: " + e.getMessage(), e);
        }
        Bouncer bouncer = (mail, reply) -> getMailetContext().sendMail(mail, config.bounceProcessor());
        SharedLimits limits;
        try {
            limits = config.sharedLimits() ? KvsSharedLimits.connect(kvs, config) : SharedLimits.nodeLocal();
        } catch (RuntimeException e) {
            throw new MessagingException("LaneDelivery: cannot share the lane limits through the KVS: " + e.getMessage(), e);
        }
        spool = new LaneSpool(config, queueFactory, new DnsMxResolver(dns), bouncer, registry, Clock.systemUTC(), limits);
        LaneMetrics.register(gauges, registry.lanes());
    }

    @Override
    public void service(Mail mail) throws MessagingException {
        if (mail.getRecipients().isEmpty()) {
            mail.setState(Mail.GHOST);
            return;
        }
        try {
            spool.enqueue(mail);
        } catch (MessagingException e) {
            throw e;
        } catch (Exception e) {
            throw new MessagingException("LaneDelivery: cannot store mail " + mail.getName() + " in its lanes", e);
        }
        mail.setState(Mail.GHOST);
    }

    @Override
    public String getMailetInfo() {
        return "LaneDelivery: per-destination lanes on the KVS spool";
    }

    @Override
    public void destroy() {
        if (spool != null) {
            spool.close();
        }
    }
}
