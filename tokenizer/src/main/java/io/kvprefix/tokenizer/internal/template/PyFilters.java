package io.kvprefix.tokenizer.internal.template;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The filters whose Jinjava versions differ from Python's Jinja for the values chat templates see,
 * replaced by Python's semantics (docs/TOKENIZER.md section 3.2): {@code tojson} (HuggingFace's,
 * {@code json.dumps}), {@code items}, {@code trim}, {@code string}, {@code length}/{@code count}
 * (code points), {@code join}, {@code reverse}, {@code upper}, {@code lower}, {@code title},
 * {@code capitalize}, {@code replace}, and {@code py_slice}, which rewritten slices call.
 *
 * <p>Thread-safety: stateless.
 */
public final class PyFilters {
    private PyFilters() {}

    /** A filter: its name and a function of the value, positional and named arguments. */
    private record Named(String name, Body body) implements Filter {
        @Override
        public String getName() {
            return name;
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return body.apply(var, args, Map.of());
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            return body.apply(var, args, kwargs);
        }
    }

    @FunctionalInterface
    private interface Body {
        Object apply(Object value, Object[] args, Map<String, Object> kwargs);
    }

    /** Every filter here. */
    public static List<Filter> all() {
        return List.of(
                new Named("tojson", PyFilters::tojson),
                new Named("items", (v, a, k) -> PyMethods.items((Map<?, ?>) v)),
                new Named("trim", (v, a, k) -> PyStrings.strip(PyFormat.str(v), arg(a, k, 0, "chars", null))),
                new Named("string", (v, a, k) -> PyFormat.str(v)),
                new Named("length", (v, a, k) -> length(v)),
                new Named("count", (v, a, k) -> length(v)),
                new Named("join", PyFilters::join),
                new Named("reverse", (v, a, k) -> reverse(v)),
                new Named("upper", (v, a, k) -> PyFormat.str(v).toUpperCase(Locale.ROOT)),
                new Named("lower", (v, a, k) -> PyFormat.str(v).toLowerCase(Locale.ROOT)),
                new Named("title", (v, a, k) -> PyStrings.title(PyFormat.str(v))),
                new Named("capitalize", (v, a, k) -> PyStrings.capitalize(PyFormat.str(v))),
                new Named("replace", PyFilters::replace),
                new Named("py_slice", PyFilters::slice));
    }

    private static String arg(Object[] a, Map<String, Object> k, int i, String name, String dflt) {
        Object v = k.containsKey(name) ? k.get(name) : a.length > i ? a[i] : null;
        return PyNone.isNone(v) ? dflt : PyFormat.str(v);
    }

    private static Object tojson(Object v, Object[] a, Map<String, Object> k) {
        Object ensureAscii = k.getOrDefault("ensure_ascii", a.length > 0 ? a[0] : Boolean.FALSE);
        Object indent = k.getOrDefault("indent", a.length > 1 ? a[1] : null);
        Object separators = k.getOrDefault("separators", a.length > 2 ? a[2] : null);
        Object sortKeys = k.getOrDefault("sort_keys", a.length > 3 ? a[3] : Boolean.FALSE);
        String ind = PyNone.isNone(indent)
                ? null
                : indent instanceof Number n ? " ".repeat(n.intValue()) : indent.toString();
        String itemSep = null;
        String keySep = null;
        if (!PyNone.isNone(separators)) {
            List<?> seps = (List<?>) separators;
            itemSep = seps.get(0).toString();
            keySep = seps.get(1).toString();
        }
        return PyFormat.json(v, Boolean.TRUE.equals(ensureAscii), ind, itemSep, keySep, Boolean.TRUE.equals(sortKeys));
    }

    private static long length(Object v) {
        if (v instanceof String s) {
            return PyStrings.length(s);
        }
        if (v instanceof Map<?, ?> m) {
            return m.size();
        }
        if (v instanceof java.util.Collection<?> c) {
            return c.size();
        }
        throw new IllegalArgumentException("object of type " + PyFormat.typeName(v) + " has no len()");
    }

    private static Object join(Object v, Object[] a, Map<String, Object> k) {
        String sep = arg(a, k, 0, "d", "");
        String attribute = arg(a, k, 1, "attribute", null);
        List<String> parts = new ArrayList<>();
        for (Object o : (Iterable<?>) v) {
            parts.add(PyFormat.str(attribute == null ? o : ((Map<?, ?>) o).get(attribute)));
        }
        return String.join(sep, parts);
    }

    private static Object reverse(Object v) {
        if (v instanceof String s) {
            return PyStrings.slice(s, null, null, -1L);
        }
        List<Object> out = new ArrayList<>();
        ((Iterable<?>) v).forEach(out::add);
        Collections.reverse(out);
        return out;
    }

    private static Object replace(Object v, Object[] a, Map<String, Object> k) {
        String s = PyFormat.str(v);
        String from = PyFormat.str(a[0]);
        String to = PyFormat.str(a[1]);
        if (a.length > 2 && a[2] instanceof Number n) {
            return String.join(to, PyStrings.split(s, from, n.intValue()));
        }
        return s.replace(from, to);
    }

    private static Object slice(Object v, Object[] a, Map<String, Object> k) {
        Long start = bound(a, 0);
        Long stop = bound(a, 1);
        Long step = bound(a, 2);
        if (v instanceof String s) {
            return PyStrings.slice(s, start, stop, step);
        }
        List<Object> list = new ArrayList<>();
        ((Iterable<?>) v).forEach(list::add);
        return PySlices.slice(list, start, stop, step);
    }

    private static Long bound(Object[] a, int i) {
        return a.length <= i || PyNone.isNone(a[i]) ? null : ((Number) a[i]).longValue();
    }
}
