package io.kvprefix.tokenizer.internal.template;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The {@code is} tests with Python's Jinja semantics where Jinjava's differ or cannot see
 * {@link PyNone}: {@code none}, {@code defined}, {@code undefined}, {@code true} and {@code false}
 * (identity with True and False, not truthiness), {@code boolean}, {@code integer}, {@code float},
 * {@code number}, {@code string}, {@code mapping}, {@code iterable} and {@code sequence} (a string
 * is both): docs/TOKENIZER.md section 3.2.
 *
 * <p>Thread-safety: stateless.
 */
public final class PyTests {
    private PyTests() {}

    private record Named(String name, Predicate<Object> test) implements ExpTest {
        @Override
        public String getName() {
            return name;
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return test.test(var);
        }

        @Override
        public boolean evaluateNegated(Object var, JinjavaInterpreter interpreter, Object... args) {
            return !test.test(var);
        }
    }

    /** Every test here. */
    public static List<ExpTest> all() {
        return List.of(
                new Named("none", PyNone::isNone),
                new Named("defined", v -> v != null),
                new Named("undefined", v -> v == null),
                new Named("true", v -> Boolean.TRUE.equals(v)),
                new Named("false", v -> Boolean.FALSE.equals(v)),
                new Named("boolean", v -> v instanceof Boolean),
                new Named("integer", PyTests::integer),
                new Named("float", v -> v instanceof Double || v instanceof Float || v instanceof BigDecimal),
                new Named("number", v -> v instanceof Number || v instanceof Boolean),
                new Named("string", v -> v instanceof CharSequence),
                new Named("mapping", v -> v instanceof Map),
                new Named("iterable", v -> v instanceof Iterable || v instanceof CharSequence || v instanceof Map),
                new Named("sequence", v -> v instanceof List || v instanceof CharSequence || v instanceof Map));
    }

    private static boolean integer(Object v) {
        return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof BigInteger;
    }
}
