package io.kvprefix.tokenizer.internal.template;

import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.expression.ExpressionStrategy;
import com.hubspot.jinjava.mode.ExecutionMode;
import com.hubspot.jinjava.tree.output.RenderedOutputNode;
import com.hubspot.jinjava.tree.parse.ExpressionToken;

/**
 * How {@code {{ expr }}} prints: Python's {@code str()} of the value ({@code True}, {@code None},
 * {@code ['a', 1]}, {@code 1e+20}), no HTML escaping, no nested interpretation: docs/TOKENIZER.md
 * section 3.2. Installed through an {@link ExecutionMode}, Jinjava's hook for the expression strategy.
 *
 * <p>Thread-safety: stateless.
 */
public final class PyOutput implements ExpressionStrategy, ExecutionMode {
    private static final long serialVersionUID = 1L;

    /** The one instance. */
    public static final PyOutput INSTANCE = new PyOutput();

    private PyOutput() {}

    @Override
    public RenderedOutputNode interpretOutput(ExpressionToken master, JinjavaInterpreter interpreter) {
        Object value = interpreter.resolveELExpression(master.getExpr(), master.getLineNumber());
        return new RenderedOutputNode(PyFormat.str(value));
    }

    @Override
    public void prepareContext(Context context) {
        context.setExpressionStrategy(this);
    }
}
