package org.jameskvs.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.jameskvs.protocol.AuthCodec;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.MalformedPayloadException;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.OversizedFrame;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Gatekeeper at the head of every connection: answers AUTH, refuses everything else with
 * AUTH_REQUIRED, and removes itself once the client authenticated, so authenticated traffic pays
 * nothing for it. Credentials are never logged. After {@value #MAX_FAILURES} failed attempts the
 * connection is closed.
 */
final class AuthenticationHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(AuthenticationHandler.class);
    static final int MAX_FAILURES = 3;

    private final byte[] user;
    private final byte[] password;
    private int failures;

    AuthenticationHandler(String user, String password) {
        this.user = user.getBytes(StandardCharsets.UTF_8);
        this.password = password.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof OversizedFrame big) {
            Responses.writeError(ctx, big.opcode(), Status.FRAME_TOO_LARGE, big.sequence(),
                    "frame of " + big.length() + " bytes exceeds the limit");
            return;
        }
        ByteBuf frame = (ByteBuf) msg;
        try {
            byte opcode = Frames.requestOpcode(frame);
            long seq = Frames.requestSequence(frame);
            if (opcode != Opcode.AUTH.code()) {
                Responses.writeError(ctx, opcode, Status.AUTH_REQUIRED, seq, null);
                return;
            }
            Frames.skipRequestHeader(frame);
            boolean ok;
            try {
                AuthCodec auth = new AuthCodec().wrap(frame); // once per connection
                String u = auth.user();
                String p = auth.password();
                // Constant-time comparisons: no timing hint about which part was wrong.
                ok = MessageDigest.isEqual(user, u.getBytes(StandardCharsets.UTF_8))
                        & MessageDigest.isEqual(password, p.getBytes(StandardCharsets.UTF_8));
            } catch (MalformedPayloadException e) {
                Responses.writeError(ctx, opcode, Status.BAD_REQUEST, seq, e.getMessage());
                return;
            }
            if (ok) {
                Responses.writeEmptyOk(ctx, opcode, seq);
                // Flush now: once removed, this handler's channelReadComplete no longer runs.
                ctx.flush();
                ctx.pipeline().remove(this);
            } else {
                failures++;
                LOG.warn("authentication failed from {} (attempt {})", ctx.channel().remoteAddress(), failures);
                Responses.writeError(ctx, opcode, Status.AUTH_FAILED, seq, null);
                if (failures >= MAX_FAILURES) {
                    ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(f -> ctx.close());
                }
            }
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
        ctx.fireChannelReadComplete();
    }
}
