package io.kvprefix.tokenizer.internal.template;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * The Python {@code str} and {@code dict} methods chat templates call ({@code s.strip('\n')},
 * {@code s.split('</think>')}, {@code d.items()}, ...), resolved with Python's semantics before
 * Jinjava's Java-bean resolver would call Java's namesakes ({@code String.split} takes a regex and
 * drops trailing empty strings): docs/TOKENIZER.md section 3.2. Only the methods named in
 * {@link #STRING_METHODS} and {@link #DICT_METHODS} are handled; the template check refuses others.
 *
 * <p>Thread-safety: stateless.
 */
public final class PyMethods extends ELResolver {
    /** The {@code str} methods handled here. */
    public static final Set<String> STRING_METHODS = Set.of(
            "strip",
            "lstrip",
            "rstrip",
            "startswith",
            "endswith",
            "split",
            "replace",
            "upper",
            "lower",
            "title",
            "capitalize",
            "find",
            "count",
            "isspace",
            "isdigit",
            "join");
    /** The {@code dict} methods handled here. */
    public static final Set<String> DICT_METHODS = Set.of("items", "keys", "values", "get");

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (method == null) {
            return null;
        }
        String name = method.toString();
        Object[] args = params == null ? new Object[0] : params;
        if (base instanceof String s && STRING_METHODS.contains(name)) {
            context.setPropertyResolved(true);
            return string(s, name, args);
        }
        if (base instanceof Map<?, ?> m && DICT_METHODS.contains(name)) {
            context.setPropertyResolved(true);
            return dict(m, name, args);
        }
        return null;
    }

    private static Object string(String s, String name, Object[] a) {
        return switch (name) {
            case "strip" -> PyStrings.strip(s, chars(a));
            case "lstrip" -> PyStrings.lstrip(s, chars(a));
            case "rstrip" -> PyStrings.rstrip(s, chars(a));
            case "startswith" -> affix(s, a, true);
            case "endswith" -> affix(s, a, false);
            case "split" -> PyStrings.split(s, chars(a), a.length > 1 ? ((Number) a[1]).intValue() : -1);
            case "replace" -> replace(s, a);
            case "upper" -> s.toUpperCase(Locale.ROOT);
            case "lower" -> s.toLowerCase(Locale.ROOT);
            case "title" -> PyStrings.title(s);
            case "capitalize" -> PyStrings.capitalize(s);
            case "find" -> find(s, (String) a[0]);
            case "count" -> count(s, (String) a[0]);
            case "isspace" -> !s.isEmpty() && s.codePoints().allMatch(PyStrings::isSpace);
            case "isdigit" -> !s.isEmpty() && s.codePoints().allMatch(Character::isDigit);
            case "join" -> join(s, a[0]);
            default -> throw new IllegalStateException(name);
        };
    }

    private static String chars(Object[] a) {
        return a.length == 0 || a[0] == null ? null : a[0].toString();
    }

    private static boolean affix(String s, Object[] a, boolean prefix) {
        List<Object> options = new ArrayList<>();
        if (a[0] instanceof Iterable<?> it) {
            it.forEach(options::add);
        } else {
            options.add(a[0]);
        }
        for (Object o : options) {
            String x = String.valueOf(o);
            if (prefix ? s.startsWith(x) : s.endsWith(x)) {
                return true;
            }
        }
        return false;
    }

    private static String replace(String s, Object[] a) {
        String from = a[0].toString();
        String to = a[1].toString();
        int max = a.length > 2 ? ((Number) a[2]).intValue() : -1;
        if (max < 0) {
            return s.replace(from, to);
        }
        return String.join(to, PyStrings.split(s, from, max));
    }

    private static long find(String s, String x) {
        int at = s.indexOf(x);
        return at < 0 ? -1 : s.codePointCount(0, at);
    }

    private static long count(String s, String x) {
        if (x.isEmpty()) {
            return PyStrings.length(s) + 1L;
        }
        return PyStrings.split(s, x, -1).size() - 1L;
    }

    private static String join(String sep, Object items) {
        List<String> parts = new ArrayList<>();
        for (Object o : (Iterable<?>) items) {
            parts.add((String) o); // Python joins strings only
        }
        return String.join(sep, parts);
    }

    private static Object dict(Map<?, ?> m, String name, Object[] a) {
        return switch (name) {
            case "items" -> items(m);
            case "keys" -> new ArrayList<>(m.keySet());
            case "values" -> new ArrayList<>(m.values());
            case "get" -> m.containsKey(a[0]) ? m.get(a[0]) : (a.length > 1 ? a[1] : null);
            default -> throw new IllegalStateException(name);
        };
    }

    /** {@code d.items()}: a list of [key, value] pairs in insertion order. */
    public static List<Object> items(Map<?, ?> m) {
        List<Object> out = new ArrayList<>(m.size());
        for (var e : m.entrySet()) {
            List<Object> pair = new ArrayList<>(2);
            pair.add(e.getKey());
            pair.add(e.getValue());
            out.add(pair);
        }
        return out;
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {}

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
