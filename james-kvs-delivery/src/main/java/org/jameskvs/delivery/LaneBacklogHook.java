package org.jameskvs.delivery;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.inject.Inject;

import org.apache.commons.configuration2.Configuration;
import org.apache.james.core.MailAddress;
import org.apache.james.core.MaybeSender;
import org.apache.james.domainlist.api.DomainList;
import org.apache.james.domainlist.api.DomainListException;
import org.apache.james.protocols.smtp.SMTPSession;
import org.apache.james.protocols.smtp.hook.HookResult;
import org.apache.james.protocols.smtp.hook.HookReturnCode;
import org.apache.james.protocols.smtp.hook.RcptHook;

/**
 * Receipt regulation per lane (smtpserver.xml handler chain): a RCPT to a remote domain whose lane holds
 * {@code laneHighWater} mails or more is answered {@code 452 4.3.1}, until the lane is down to
 * {@code laneLowWater} (see {@link LaneDeliveryConfig#waterMarks}). The sender keeps the mail and
 * retries; nothing already accepted is affected. Local domains are never refused here.
 */
public class LaneBacklogHook implements RcptHook {
    private static final long REFRESH_MILLIS = 1_000;

    private final LaneRegistry registry;
    private final DomainList domains;
    private final Map<String, BacklogGate> gates = new ConcurrentHashMap<>();
    private LaneDeliveryConfig.WaterMarks marks = LaneDeliveryConfig.waterMarks(key -> null);

    @Inject
    public LaneBacklogHook(LaneRegistry registry, DomainList domains) {
        this.registry = registry;
        this.domains = domains;
    }

    @Override
    public void init(Configuration config) {
        marks = LaneDeliveryConfig.waterMarks(config::getString);
    }

    @Override
    public HookResult doRcpt(SMTPSession session, MaybeSender sender, MailAddress rcpt) {
        try {
            if (domains.containsDomain(rcpt.getDomain())) {
                return HookResult.DECLINED;
            }
        } catch (DomainListException e) {
            return HookResult.DECLINED;
        }
        return registry.find(rcpt.getDomain().asString())
            .map(lane -> gates.computeIfAbsent(lane.lane().name(),
                name -> new BacklogGate(marks, lane.queueSize(), System::currentTimeMillis, REFRESH_MILLIS)))
            .filter(BacklogGate::refuses)
            .map(gate -> HookResult.builder()
                .hookReturnCode(HookReturnCode.denySoft())
                .smtpReturnCode("452")
                .smtpDescription("4.3.1 Too much mail queued for " + rcpt.getDomain().asString() + ", try again later")
                .build())
            .orElse(HookResult.DECLINED);
    }
}
