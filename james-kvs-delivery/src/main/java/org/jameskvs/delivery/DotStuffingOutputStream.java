package org.jameskvs.delivery;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes a message as the DATA phase needs it (RFC 5321 4.5.2): a line starting with '.' gets another
 * '.', and a bare LF or CR becomes CRLF, so the body cannot contain the end-of-data line by accident.
 * {@link #finish()} ends the last line if needed and writes the terminating ".CRLF".
 */
final class DotStuffingOutputStream extends FilterOutputStream {
    private boolean atLineStart = true;
    private boolean lastWasCr;

    DotStuffingOutputStream(OutputStream out) {
        super(out);
    }

    @Override
    public void write(int b) throws IOException {
        if (b == '\n') {
            if (!lastWasCr) {
                out.write('\r');
            }
            out.write('\n');
            atLineStart = true;
            lastWasCr = false;
            return;
        }
        if (lastWasCr) { // a CR not followed by LF
            out.write('\n');
            atLineStart = true;
        }
        if (b == '\r') {
            out.write('\r');
            lastWasCr = true;
            return;
        }
        if (atLineStart && b == '.') {
            out.write('.');
        }
        out.write(b);
        atLineStart = false;
        lastWasCr = false;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        for (int i = off; i < off + len; i++) {
            write(b[i]);
        }
    }

    void finish() throws IOException {
        if (lastWasCr) {
            out.write('\n');
        } else if (!atLineStart) {
            out.write('\r');
            out.write('\n');
        }
        out.write(new byte[] {'.', '\r', '\n'});
        out.flush();
    }

    @Override
    public void close() {
        // the connection outlives one message
    }
}
