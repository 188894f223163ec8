package org.jameskvs.james.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.apache.mailet.AttributeValue;
import org.junit.jupiter.api.Test;

class AttributeJsonTest {
    private static final List<AttributeValue<?>> SCALARS = List.of(
        AttributeValue.of(""),
        AttributeValue.of("plain"),
        AttributeValue.of("quote \" backslash \\ slash / tab \t newline \n cr \r bs \b ff \f nul \u0000 esc \u001b del \u007f"),
        AttributeValue.of("é ü 中文 emoji \uD83D\uDE00 line sep \u2028"),
        AttributeValue.of("\\u0041 not an escape"),
        AttributeValue.of("ends with backslash \\"),
        AttributeValue.of("\""),
        AttributeValue.of(true),
        AttributeValue.of(false),
        AttributeValue.of(0),
        AttributeValue.of(-42),
        AttributeValue.of(Integer.MIN_VALUE),
        AttributeValue.of(Integer.MAX_VALUE),
        AttributeValue.of(0L),
        AttributeValue.of(42L),
        AttributeValue.of(Long.MIN_VALUE),
        AttributeValue.of(Long.MAX_VALUE));

    @Test
    void scalarsAreWrittenAsJacksonWritesThem() throws Exception {
        for (AttributeValue<?> value : SCALARS) {
            assertThat(AttributeJson.write(value)).as(value.toString()).isEqualTo(value.toJson().get().toString());
        }
    }

    @Test
    void scalarsRoundTrip() throws Exception {
        for (AttributeValue<?> value : SCALARS) {
            assertThat(AttributeJson.read(AttributeJson.write(value))).as(value.toString()).isEqualTo(value);
        }
    }

    @Test
    void whatJacksonWroteIsReadAsJamesReadsIt() throws Exception {
        for (AttributeValue<?> value : SCALARS) {
            String json = value.toJson().get().toString();
            assertThat(AttributeJson.read(json)).as(json).isEqualTo(AttributeValue.fromJsonString(json));
        }
        // Escapes Jackson may write or accept that this writer does not produce.
        String escaped = "{\"serializer\":\"StringSerializer\",\"value\":\"a\\/b\\u00e9\\u0001\\uD83D\\uDE00\"}";
        assertThat(AttributeJson.read(escaped)).isEqualTo(AttributeValue.fromJsonString(escaped))
            .isEqualTo(AttributeValue.of("a/bé\u0001\uD83D\uDE00"));
    }

    @Test
    void otherValuesGoThroughJackson() throws Exception {
        List<AttributeValue<?>> others = List.of(
            AttributeValue.of(1.5f),
            AttributeValue.of(2.25d),
            AttributeValue.of(List.<AttributeValue<?>>of(AttributeValue.of("a"), AttributeValue.of(3))),
            AttributeValue.of(Map.<String, AttributeValue<?>>of("k", AttributeValue.of(7L))));
        for (AttributeValue<?> value : others) {
            String json = AttributeJson.write(value);
            assertThat(json).isEqualTo(value.toJson().get().toString());
            assertThat(AttributeJson.read(json)).isEqualTo(value);
        }
        assertThat(AttributeJson.write(AttributeValue.ofUnserializable(new Object()))).isNull();
    }

    @Test
    void oddFormsFallBackToJackson() throws Exception {
        // Not the compact form this class writes: Jackson reads it (same result as James's reader).
        for (String json : List.of(
            "{\"serializer\":\"StringSerializer\", \"value\":\"x\"}",
            "{\"value\":\"x\",\"serializer\":\"StringSerializer\"}",
            "{\"serializer\":\"IntSerializer\",\"value\":7}",
            "{\"serializer\":\"LongSerializer\",\"value\":7}",
            "{\"serializer\":\"LongSerializer\",\"value\":12345678901}",
            "{\"serializer\":\"BooleanSerializer\",\"value\":true}")) {
            assertThat(AttributeJson.read(json)).as(json).isEqualTo(AttributeValue.fromJsonString(json));
        }
    }
}
