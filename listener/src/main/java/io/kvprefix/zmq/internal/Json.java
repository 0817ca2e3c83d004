package io.kvprefix.zmq.internal;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader (RFC 8259) for the TensorRT-LLM event lines: objects become
 * {@link LinkedHashMap}s, arrays {@link ArrayList}s, integers {@link Long} (or {@link BigInteger}
 * above {@code Long.MAX_VALUE}), other numbers {@link Double}, {@code null} Java null. Nesting is
 * limited to 64 levels; any error throws {@link IllegalArgumentException} with the offset.
 *
 * <p>Thread-safety: stateless; each call parses on its own.
 */
public final class Json {
    private static final int MAX_DEPTH = 64;
    private final String s;
    private int p;

    private Json(String s) {
        this.s = s;
    }

    /** Parses {@code text}, which must hold exactly one JSON value. */
    public static Object parse(String text) {
        Json j = new Json(text);
        j.ws();
        Object v = j.value(0);
        j.ws();
        if (j.p != text.length()) {
            throw j.error("trailing data after the JSON value");
        }
        return v;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON at offset " + p + ": " + what);
    }

    private void ws() {
        while (p < s.length()
                && (s.charAt(p) == ' ' || s.charAt(p) == '\t' || s.charAt(p) == '\n' || s.charAt(p) == '\r')) {
            p++;
        }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
        if (p >= s.length()) {
            throw error("a value is missing");
        }
        char c = s.charAt(p);
        return switch (c) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> string();
            case 't' -> word("true", Boolean.TRUE);
            case 'f' -> word("false", Boolean.FALSE);
            case 'n' -> word("null", null);
            default -> number();
        };
    }

    private Object word(String w, Object v) {
        if (!s.startsWith(w, p)) {
            throw error("unexpected character '" + s.charAt(p) + "'");
        }
        p += w.length();
        return v;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> m = new LinkedHashMap<>();
        p++;
        ws();
        if (p < s.length() && s.charAt(p) == '}') {
            p++;
            return m;
        }
        while (true) {
            ws();
            if (p >= s.length() || s.charAt(p) != '"') {
                throw error("expected a field name");
            }
            String k = string();
            ws();
            expect(':');
            ws();
            if (m.containsKey(k)) {
                throw error("field \"" + k + "\" appears twice");
            }
            m.put(k, value(depth + 1));
            ws();
            if (p < s.length() && s.charAt(p) == ',') {
                p++;
                continue;
            }
            expect('}');
            return m;
        }
    }

    private List<Object> array(int depth) {
        List<Object> a = new ArrayList<>();
        p++;
        ws();
        if (p < s.length() && s.charAt(p) == ']') {
            p++;
            return a;
        }
        while (true) {
            ws();
            a.add(value(depth + 1));
            ws();
            if (p < s.length() && s.charAt(p) == ',') {
                p++;
                continue;
            }
            expect(']');
            return a;
        }
    }

    private void expect(char c) {
        if (p >= s.length() || s.charAt(p) != c) {
            throw error("expected '" + c + "'");
        }
        p++;
    }

    private String string() {
        p++;
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (p >= s.length()) {
                throw error("unterminated string");
            }
            char c = s.charAt(p++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                throw error("control character in a string");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (p >= s.length()) {
                throw error("unterminated escape");
            }
            char e = s.charAt(p++);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (p + 4 > s.length()) {
                        throw error("short \\u escape");
                    }
                    try {
                        sb.append((char) Integer.parseInt(s.substring(p, p + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    p += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private Object number() {
        int start = p;
        if (p < s.length() && s.charAt(p) == '-') {
            p++;
        }
        int digits = p;
        while (p < s.length() && Character.isDigit(s.charAt(p))) {
            p++;
        }
        if (p == digits || (s.charAt(digits) == '0' && p - digits > 1)) {
            throw error("not a JSON number");
        }
        boolean integer = true;
        if (p < s.length() && s.charAt(p) == '.') {
            integer = false;
            p++;
            int f = p;
            while (p < s.length() && Character.isDigit(s.charAt(p))) {
                p++;
            }
            if (p == f) {
                throw error("not a JSON number");
            }
        }
        if (p < s.length() && (s.charAt(p) == 'e' || s.charAt(p) == 'E')) {
            integer = false;
            p++;
            if (p < s.length() && (s.charAt(p) == '+' || s.charAt(p) == '-')) {
                p++;
            }
            int f = p;
            while (p < s.length() && Character.isDigit(s.charAt(p))) {
                p++;
            }
            if (p == f) {
                throw error("not a JSON number");
            }
        }
        String t = s.substring(start, p);
        if (!integer) {
            return Double.parseDouble(t);
        }
        BigInteger b = new BigInteger(t);
        return b.bitLength() < 64 ? (Object) b.longValue() : b;
    }
}
