package io.kvprefix.tokenizer.internal.template;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Request JSON as the Python values {@code json.loads} makes of it, the way a template sees them:
 * objects as insertion-ordered maps, arrays as lists, integers as {@code Long} (or
 * {@code BigInteger}), other numbers as {@code Double}, {@code null} as {@link PyNone}
 * (docs/TOKENIZER.md section 3.2).
 *
 * <p>Thread-safety: stateless.
 */
public final class PyValues {
    private PyValues() {}

    /** The Python value of a JSON node. */
    public static Object of(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return PyNone.NONE;
        }
        if (n.isTextual()) {
            return n.textValue();
        }
        if (n.isBoolean()) {
            return n.booleanValue();
        }
        if (n.isIntegralNumber()) {
            return n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
        }
        if (n.isNumber()) {
            return n.doubleValue();
        }
        if (n.isArray()) {
            List<Object> list = new ArrayList<>(n.size());
            n.forEach(e -> list.add(of(e)));
            return list;
        }
        Map<String, Object> map = new LinkedHashMap<>();
        n.properties().forEach(e -> map.put(e.getKey(), of(e.getValue())));
        return map;
    }
}
