package io.kvprefix.tokenizer.internal.template;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Python's {@code str()}, {@code repr()} and {@code json.dumps} for the values a chat template sees
 * (strings, integers, floats, booleans, None, lists and dicts from the request JSON), so that the
 * rendered prompt is character for character what vLLM's Python Jinja renders: docs/TOKENIZER.md
 * section 3.2.
 *
 * <p>Thread-safety: stateless.
 */
public final class PyFormat {
    private PyFormat() {}

    /** Python's {@code str(value)}: what {@code {{ value }}} prints; Jinjava's null (an undefined name) prints nothing. */
    public static String str(Object v) {
        if (v == null) {
            return "";
        }
        if (v instanceof CharSequence s) {
            return s.toString();
        }
        return repr(v);
    }

    /** Python's name of the value's type, for error messages. */
    public static String typeName(Object v) {
        if (PyNone.isNone(v)) {
            return "NoneType";
        }
        if (v instanceof Boolean) {
            return "bool";
        }
        if (v instanceof CharSequence) {
            return "str";
        }
        if (v instanceof Map) {
            return "dict";
        }
        if (v instanceof Iterable) {
            return "list";
        }
        return v instanceof Double || v instanceof Float || v instanceof BigDecimal ? "float" : "int";
    }

    /** Python's {@code repr(value)}. */
    public static String repr(Object v) {
        StringBuilder b = new StringBuilder();
        repr(v, b);
        return b.toString();
    }

    private static void repr(Object v, StringBuilder b) {
        if (v == null) {
            b.append("None");
        } else if (v instanceof Boolean x) {
            b.append(x ? "True" : "False");
        } else if (v instanceof CharSequence s) {
            reprString(s.toString(), b);
        } else if (v instanceof Number n) {
            b.append(number(n, false));
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (var e : m.entrySet()) {
                b.append(first ? "" : ", ");
                first = false;
                repr(e.getKey(), b);
                b.append(": ");
                repr(e.getValue(), b);
            }
            b.append('}');
        } else if (v instanceof Iterable<?> it) {
            b.append('[');
            boolean first = true;
            for (Object o : it) {
                b.append(first ? "" : ", ");
                first = false;
                repr(o, b);
            }
            b.append(']');
        } else {
            b.append(v);
        }
    }

    private static void reprString(String s, StringBuilder b) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        b.append(quote);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == quote || cp == '\\') {
                b.append('\\').appendCodePoint(cp);
            } else if (cp == '\n') {
                b.append("\\n");
            } else if (cp == '\r') {
                b.append("\\r");
            } else if (cp == '\t') {
                b.append("\\t");
            } else if (printable(cp)) {
                b.appendCodePoint(cp);
            } else if (cp < 0x100) {
                b.append(String.format("\\x%02x", cp));
            } else if (cp < 0x10000) {
                b.append(String.format("\\u%04x", cp));
            } else {
                b.append(String.format("\\U%08x", cp));
            }
        }
        b.append(quote);
    }

    /** Python's {@code str.isprintable} for one code point: not Other (C*) nor Separator (Z*), but space is. */
    static boolean printable(int cp) {
        if (cp == ' ') {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL,
                    Character.FORMAT,
                    Character.SURROGATE,
                    Character.PRIVATE_USE,
                    Character.UNASSIGNED,
                    Character.LINE_SEPARATOR,
                    Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    /** An integer as Python prints it, or a float as {@code float.__repr__} does (shortest round trip). */
    static String number(Number n, boolean json) {
        if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte) {
            return Long.toString(n.longValue());
        }
        if (n instanceof BigInteger i) {
            return i.toString();
        }
        double d = n instanceof BigDecimal bd ? bd.doubleValue() : n.doubleValue();
        if (Double.isNaN(d)) {
            return json ? "NaN" : "nan";
        }
        if (Double.isInfinite(d)) {
            return json ? (d > 0 ? "Infinity" : "-Infinity") : (d > 0 ? "inf" : "-inf");
        }
        return floatRepr(d);
    }

    /** {@code repr(float)}: the shortest digits, fixed notation for decimal exponents -4 < e < 16. */
    static String floatRepr(double d) {
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal bd = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        String digits = bd.unscaledValue().toString();
        int decpt = digits.length() - bd.scale(); // value = 0.digits * 10^decpt
        StringBuilder b = new StringBuilder(d < 0 ? "-" : "");
        if (decpt > 16 || decpt < -3) {
            b.append(digits.charAt(0));
            if (digits.length() > 1) {
                b.append('.').append(digits, 1, digits.length());
            }
            int exp = decpt - 1;
            b.append('e').append(exp < 0 ? '-' : '+');
            b.append(Math.abs(exp) < 10 ? "0" : "").append(Math.abs(exp));
        } else if (decpt <= 0) {
            b.append("0.").append("0".repeat(-decpt)).append(digits);
        } else if (decpt >= digits.length()) {
            b.append(digits).append("0".repeat(decpt - digits.length())).append(".0");
        } else {
            b.append(digits, 0, decpt).append('.').append(digits, decpt, digits.length());
        }
        return b.toString();
    }

    /**
     * {@code json.dumps(v, ensure_ascii, indent, separators, sort_keys)} as HuggingFace's {@code tojson}
     * filter calls it (its defaults: {@code ensure_ascii=False}, no indent, Python's default separators
     * {@code ", "} and {@code ": "}, or {@code ","} and {@code ": "} with an indent).
     */
    public static String json(
            Object v, boolean ensureAscii, String indent, String itemSep, String keySep, boolean sortKeys) {
        String items = itemSep != null ? itemSep : indent == null ? ", " : ",";
        String keys = keySep != null ? keySep : ": ";
        StringBuilder b = new StringBuilder();
        new JsonWriter(b, ensureAscii, indent, items, keys, sortKeys).write(v, 0);
        return b.toString();
    }

    private record JsonWriter(StringBuilder b, boolean ascii, String indent, String items, String keys, boolean sort) {
        void write(Object v, int level) {
            if (PyNone.isNone(v)) {
                b.append("null");
            } else if (v instanceof Boolean x) {
                b.append(x ? "true" : "false");
            } else if (v instanceof CharSequence s) {
                string(s.toString());
            } else if (v instanceof Number n) {
                b.append(number(n, true));
            } else if (v instanceof Map<?, ?> m) {
                List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
                if (sort) {
                    entries.sort((x, y) -> String.valueOf(x.getKey()).compareTo(String.valueOf(y.getKey())));
                }
                container('{', '}', entries, level);
            } else if (v instanceof Iterable<?> it) {
                List<Object> list = new ArrayList<>();
                it.forEach(list::add);
                container('[', ']', list, level);
            } else {
                string(v.toString());
            }
        }

        private void container(char open, char close, List<?> elements, int level) {
            b.append(open);
            if (elements.isEmpty()) {
                b.append(close);
                return;
            }
            for (int i = 0; i < elements.size(); i++) {
                if (i > 0) {
                    b.append(items);
                }
                newline(level + 1);
                if (elements.get(i) instanceof Map.Entry<?, ?> e) {
                    string(String.valueOf(e.getKey()));
                    b.append(keys);
                    write(e.getValue(), level + 1);
                } else {
                    write(elements.get(i), level + 1);
                }
            }
            newline(level);
            b.append(close);
        }

        private void newline(int level) {
            if (indent != null) {
                b.append('\n').append(indent.repeat(level));
            }
        }

        private void string(String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    case '\b' -> b.append("\\b");
                    case '\f' -> b.append("\\f");
                    default -> {
                        if (c < 0x20 || (ascii && c > 0x7e)) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            b.append('"');
        }
    }
}
