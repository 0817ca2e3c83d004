package io.kvprefix.tokenizer.internal.template;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.tree.Node;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jinjava.javax.el.CompositeELResolver;
import jinjava.javax.el.ELResolver;

/**
 * One chat template, compiled once, rendered with HuggingFace's conventions ({@code trim_blocks},
 * {@code lstrip_blocks}, {@code raise_exception}, {@code strftime_now}, {@code tojson},
 * {@code generation}) and Python's Jinja semantics (docs/TOKENIZER.md section 3).
 *
 * <p>Thread-safety: thread-safe; the template is parsed once, and each render has its own interpreter
 * and context over that tree.
 */
public final class ChatTemplate {
    /** A render that failed: the template raised, or an expression could not be evaluated. */
    public static final class RenderFailure extends Exception {
        private static final long serialVersionUID = 1L;

        RenderFailure(String message) {
            super(message);
        }
    }

    private static final long MAX_OUTPUT = 64L << 20;

    private final Jinjava jinjava;
    private final Node tree;

    private ChatTemplate(Jinjava jinjava, Node tree) {
        this.jinjava = jinjava;
        this.tree = tree;
    }

    /**
     * Compiles {@code template}; an {@link IllegalArgumentException} names a construct that is not
     * rendered with Python's semantics, or a syntax error.
     */
    public static ChatTemplate compile(String template) {
        String source = TemplateSource.prepare(template);
        Jinjava j = new Jinjava(config());
        for (var f : PyFilters.all()) {
            j.registerFilter(f);
        }
        for (var t : PyTests.all()) {
            j.registerExpTest(t);
        }
        j.registerTag(new TemplateFunctions.GenerationTag());
        j.registerFunction(new ELFunctionDefinition(
                "", "raise_exception", TemplateFunctions.class, "raiseException", Object.class));
        j.registerFunction(
                new ELFunctionDefinition("", "strftime_now", TemplateFunctions.class, "strftimeNow", String.class));
        j.registerFunction(new ELFunctionDefinition("", "py_none", PyNone.class, "none"));
        JinjavaInterpreter parser = j.newInterpreter();
        try (var current = JinjavaInterpreter.closeablePushCurrent(parser).get()) {
            Node tree = current.value().parse(source); // once: a render walks the tree, it does not change it
            List<String> errors = fatal(parser.getErrorsCopy());
            if (!errors.isEmpty()) {
                throw new IllegalArgumentException("the chat template does not parse: " + String.join("; ", errors));
            }
            return new ChatTemplate(j, tree);
        }
    }

    private static JinjavaConfig config() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyMethods());
        resolver.add(defaultResolver());
        return JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                .withKeepTrailingNewline(true) // TemplateSource already dropped the one final newline
                .withMaxOutputSize(MAX_OUTPUT)
                .withElResolver(resolver)
                .withExecutionMode(PyOutput.INSTANCE)
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseNaturalOperatorPrecedence(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withKeepNullableLoopValues(true)
                        .withUseTrimmingForNotesAndExpressions(true)
                        .build())
                .build();
    }

    private static ELResolver defaultResolver() {
        return com.hubspot.jinjava.el.JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY;
    }

    /** Renders the template with these variables (Python values: see {@link PyValues}). */
    public String render(Map<String, Object> variables) throws RenderFailure {
        JinjavaConfig config = jinjava.getGlobalConfig();
        Context context = new Context(jinjava.getGlobalContextCopy(), variables, config.getDisabled());
        JinjavaInterpreter interpreter = new JinjavaInterpreter(jinjava, context, config);
        String out;
        try (var current = JinjavaInterpreter.closeablePushCurrent(interpreter).get()) {
            out = current.value().render(tree, false);
        } catch (TemplateFunctions.Raised e) {
            throw new RenderFailure("the chat template raised: " + e.getMessage());
        } catch (RuntimeException e) {
            throw new RenderFailure("the chat template failed: " + e);
        }
        List<String> fatal = fatal(interpreter.getErrorsCopy());
        if (!fatal.isEmpty()) {
            throw new RenderFailure(String.join("; ", fatal));
        }
        return out;
    }

    private static List<String> fatal(List<TemplateError> errors) {
        List<String> out = new ArrayList<>();
        for (TemplateError e : errors) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                out.add(describe(e));
            }
        }
        return out;
    }

    private static String describe(TemplateError e) {
        Throwable cause = e.getException();
        while (cause != null) {
            if (cause instanceof TemplateFunctions.Raised raised) {
                return "the chat template raised: " + raised.getMessage();
            }
            cause = cause.getCause();
        }
        return "the chat template failed at line " + e.getLineno() + ": " + e.getMessage();
    }
}
