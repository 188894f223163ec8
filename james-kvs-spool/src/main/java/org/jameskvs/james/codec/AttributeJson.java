package org.jameskvs.james.codec;

import java.io.IOException;

import org.apache.mailet.AttributeValue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The JSON form of a mail attribute value, exactly as James writes it
 * ({@code AttributeValue.toJson()}: {@code {"serializer":"<name>","value":<json>}}), without Jackson's
 * per-thread buffers.
 *
 * <p>Jackson keeps a {@code BufferRecycler} (about 8 KB of char and byte buffers) per thread that ever
 * serialized or parsed through a default {@code ObjectMapper}, held by a soft reference, i.e. kept in
 * James's heap for as long as the thread lives: with the codec running on every SMTP, spooler, delivery
 * and reader thread that is about 25 buffers that James's in-memory queue never makes. So:
 * <ul>
 * <li>String, Boolean, Integer and Long values (the ones SMTP and the stock mailets set; with their
 *   standard serializers) are written and read here, to the same bytes Jackson writes;</li>
 * <li>every other value goes through a private {@code ObjectMapper} whose buffers are not kept per
 *   thread.</li>
 * </ul>
 * The stored form is unchanged: mail written before (by Jackson) is read the same way.
 */
final class AttributeJson {
    private static final String STRING = "{\"serializer\":\"StringSerializer\",\"value\":";
    private static final String BOOLEAN = "{\"serializer\":\"BooleanSerializer\",\"value\":";
    private static final String INT = "{\"serializer\":\"IntSerializer\",\"value\":";
    private static final String LONG = "{\"serializer\":\"LongSerializer\",\"value\":";

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private AttributeJson() {
    }

    /** The value's JSON, or null when it has no serializer ({@code AttributeValue.ofUnserializable}). */
    static String write(AttributeValue<?> value) throws IOException {
        Object v = value.value();
        // equals compares value and serializer: only values made with the standard serializer take the short path.
        if (v instanceof String s && value.equals(AttributeValue.of(s))) {
            StringBuilder json = new StringBuilder(STRING.length() + s.length() + 8).append(STRING);
            quote(s, json);
            return json.append('}').toString();
        }
        if (v instanceof Boolean b && value.equals(AttributeValue.of(b))) {
            return BOOLEAN + b + '}';
        }
        if (v instanceof Integer i && value.equals(AttributeValue.of(i))) {
            return INT + i + '}';
        }
        if (v instanceof Long l && value.equals(AttributeValue.of(l))) {
            return LONG + l + '}';
        }
        var json = value.toJson();
        return json.isPresent() ? Jackson.MAPPER.writeValueAsString(json.get()) : null;
    }

    /** The attribute value of {@code json} (as {@code AttributeValue.fromJsonString}). */
    static AttributeValue<?> read(String json) throws IOException {
        int end = json.length() - 1; // the closing '}'
        if (end > 0 && json.charAt(end) == '}') {
            if (json.startsWith(STRING)) {
                String s = unquote(json, STRING.length(), end);
                if (s != null) {
                    return AttributeValue.of(s);
                }
            } else if (json.startsWith(BOOLEAN)) {
                String literal = json.substring(BOOLEAN.length(), end);
                if (literal.equals("true") || literal.equals("false")) {
                    return AttributeValue.of(Boolean.valueOf(literal));
                }
            } else if (json.startsWith(INT) && isInteger(json, INT.length(), end)) {
                try {
                    return AttributeValue.of(Integer.parseInt(json, INT.length(), end, 10));
                } catch (NumberFormatException e) {
                    // not an int after all: Jackson decides below
                }
            } else if (json.startsWith(LONG) && isInteger(json, LONG.length(), end)) {
                try {
                    return AttributeValue.of(Long.parseLong(json, LONG.length(), end, 10));
                } catch (NumberFormatException e) {
                    // idem
                }
            }
        }
        return AttributeValue.fromJson(Jackson.MAPPER.readTree(json));
    }

    /** A JSON integer literal: optional minus, then digits. */
    private static boolean isInteger(String s, int from, int to) {
        int i = from < to && s.charAt(from) == '-' ? from + 1 : from;
        if (i >= to) {
            return false;
        }
        for (; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** Appends {@code s} as a JSON string literal. */
    static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]); // as Jackson: upper case
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * The string of the JSON string literal spanning exactly {@code [from, to)}, or null when it is not
     * one (then Jackson reads the whole value).
     */
    static String unquote(String json, int from, int to) {
        if (to - from < 2 || json.charAt(from) != '"' || json.charAt(to - 1) != '"') {
            return null;
        }
        int last = to - 1; // the closing quote
        int i = from + 1;
        int plain = json.indexOf('\\', i);
        if (plain < 0 || plain >= last) {
            int quote = json.indexOf('"', i);
            return quote == last ? json.substring(i, last) : null;
        }
        StringBuilder out = new StringBuilder(last - i);
        while (i < last) {
            char c = json.charAt(i++);
            if (c == '"' || c < 0x20) {
                return null; // an unescaped quote before the end, or a raw control character
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (i >= last) {
                return null;
            }
            char e = json.charAt(i++);
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    if (i + 4 > last) {
                        return null;
                    }
                    int code = 0;
                    for (int k = 0; k < 4; k++) {
                        int digit = Character.digit(json.charAt(i++), 16);
                        if (digit < 0) {
                            return null;
                        }
                        code = code << 4 | digit;
                    }
                    out.append((char) code);
                }
                default -> {
                    return null;
                }
            }
        }
        return out.toString();
    }

    /** Created on first use: only mail with attributes of other types needs it. */
    private static final class Jackson {
        static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .disable(JsonFactory.Feature.USE_THREAD_LOCAL_FOR_BUFFER_RECYCLING)
            .build());
    }
}
