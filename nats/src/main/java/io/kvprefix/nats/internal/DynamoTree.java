package io.kvprefix.nats.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * Dynamo's messages as one tree whatever their encoding (docs/ENGINES.md section 4.2): JSON (the
 * JetStream durable mode, older core subjects) and named MessagePack (the event plane) both become
 * maps with string keys, lists, {@code Long} (an unsigned 64-bit value keeps its bits), {@code
 * Double}, {@code String}, {@code byte[]}, {@code Boolean} and null, so one reader
 * ({@link DynamoEvents}) maps Dynamo's serde shapes onto kvprefix's events.
 *
 * <p>Thread-safety: stateless.
 */
public final class DynamoTree {
    private static final int MAX_DEPTH = 32;
    private static final JsonFactory JSON = JsonFactory.builder().build();

    private DynamoTree() {}

    /** The tree of a JSON document; {@link IOException} for malformed or trailing input. */
    public static Object json(byte[] bytes) throws IOException {
        try (JsonParser p = JSON.createParser(bytes)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new IOException("empty JSON message");
            }
            Object v = jsonValue(p, t, 0);
            if (p.nextToken() != null) {
                throw new IOException("trailing data after the JSON value");
            }
            return v;
        }
    }

    private static Object jsonValue(JsonParser p, JsonToken t, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("JSON nested deeper than " + MAX_DEPTH);
        }
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String name = p.currentName();
                    m.put(name, jsonValue(p, p.nextToken(), depth + 1));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                    l.add(jsonValue(p, e, depth + 1));
                }
                return l;
            }
            case VALUE_NUMBER_INT -> {
                return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                        ? p.getBigIntegerValue().longValue() // a u64 above Long.MAX_VALUE: its 64 bits
                        : p.getLongValue();
            }
            case VALUE_NUMBER_FLOAT -> {
                return p.getDoubleValue();
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return t == JsonToken.VALUE_TRUE;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> throw new IOException("unexpected JSON token " + t);
        }
    }

    /** The tree of one MessagePack value; {@link IOException} for malformed or trailing input. */
    public static Object msgpack(byte[] bytes) throws IOException {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(bytes)) {
            if (!u.hasNext()) {
                throw new IOException("empty MessagePack message");
            }
            Object v = packValue(u, 0, bytes.length);
            if (u.hasNext()) {
                throw new IOException("trailing data after the MessagePack value");
            }
            return v;
        } catch (org.msgpack.core.MessagePackException e) {
            throw new IOException("malformed MessagePack: " + e.getMessage(), e);
        }
    }

    private static Object packValue(MessageUnpacker u, int depth, int size) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("MessagePack nested deeper than " + MAX_DEPTH);
        }
        MessageFormat f = u.getNextFormat();
        switch (f.getValueType()) {
            case NIL -> {
                u.unpackNil();
                return null;
            }
            case BOOLEAN -> {
                return u.unpackBoolean();
            }
            case INTEGER -> {
                return f == MessageFormat.UINT64 ? u.unpackBigInteger().longValue() : u.unpackLong();
            }
            case FLOAT -> {
                return u.unpackDouble();
            }
            case STRING -> {
                return u.unpackString();
            }
            case BINARY -> {
                int n = u.unpackBinaryHeader();
                if (n > size - u.getTotalReadBytes()) { // refused before msgpack allocates what it claims
                    throw new IOException("a byte string claims " + n + " bytes of a " + size + "-byte message");
                }
                return u.readPayload(n);
            }
            case ARRAY -> {
                int n = u.unpackArrayHeader();
                List<Object> l = new ArrayList<>(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    l.add(packValue(u, depth + 1, size));
                }
                return l;
            }
            case MAP -> {
                int n = u.unpackMapHeader();
                Map<String, Object> m = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    Object k = packValue(u, depth + 1, size);
                    m.put(String.valueOf(k), packValue(u, depth + 1, size));
                }
                return m;
            }
            default -> throw new IOException("unexpected MessagePack " + f);
        }
    }
}
