package io.kvprefix.tokenizer.internal.template;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.Locale;

/**
 * The globals HuggingFace's {@code apply_chat_template} adds to its Jinja environment, and the
 * {@code generation} block of its {@code AssistantTracker} (which renders its body):
 * {@code raise_exception(message)}, {@code strftime_now(format)} (docs/TOKENIZER.md section 3.1).
 *
 * <p>Thread-safety: stateless.
 */
public final class TemplateFunctions {
    private TemplateFunctions() {}

    /** Thrown by {@code raise_exception}: the template refused the conversation. */
    public static final class Raised extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Raised(String message) {
            super(message);
        }
    }

    /** {@code raise_exception(message)}. */
    public static Object raiseException(Object message) {
        throw new Raised(PyFormat.str(message));
    }

    /** {@code strftime_now(format)}: the local time formatted with Python's {@code strftime} directives. */
    public static String strftimeNow(String format) {
        return strftime(ZonedDateTime.now(), format);
    }

    /** Python's {@code strftime} for the directives chat templates use (C locale names). */
    static String strftime(ZonedDateTime t, String format) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                b.append(c);
                continue;
            }
            char d = format.charAt(++i);
            switch (d) {
                case 'd' -> b.append(String.format("%02d", t.getDayOfMonth()));
                case 'm' -> b.append(String.format("%02d", t.getMonthValue()));
                case 'Y' -> b.append(t.getYear());
                case 'y' -> b.append(String.format("%02d", t.getYear() % 100));
                case 'H' -> b.append(String.format("%02d", t.getHour()));
                case 'M' -> b.append(String.format("%02d", t.getMinute()));
                case 'S' -> b.append(String.format("%02d", t.getSecond()));
                case 'b' -> b.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> b.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> b.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> b.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'j' -> b.append(String.format("%03d", t.getDayOfYear()));
                case '%' -> b.append('%');
                default -> throw new IllegalArgumentException("strftime directive %" + d + " is not supported");
            }
        }
        return b.toString();
    }

    /** The {@code {% generation %}...{% endgeneration %}} block: its body, rendered. */
    public static final class GenerationTag implements Tag {
        private static final long serialVersionUID = 1L;

        @Override
        public String getName() {
            return "generation";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            StringBuilder b = new StringBuilder();
            for (Node child : tagNode.getChildren()) {
                b.append(child.render(interpreter).getValue());
            }
            return b.toString();
        }
    }
}
