/**
 * Chat templates rendered with Python Jinja's semantics on Jinjava (docs/TOKENIZER.md section 3.2).
 *
 * <p>vLLM renders a model's chat template with Python's Jinja2 in HuggingFace's environment
 * ({@code trim_blocks}, {@code lstrip_blocks}, {@code tojson}, {@code raise_exception}), and every
 * character of the rendered text decides tokens. Jinjava differs from Python's Jinja in how values
 * print ({@code true} for {@code True}, nothing for {@code None}), in its string methods (Java's
 * {@code split} takes a regex and drops trailing empty strings), in what its parser reads (no slice
 * step, fewer string escapes, {@code name=a - 1} bound as {@code (name=a) - 1}) and in one null for
 * None and undefined. This package closes those gaps where templates meet them: a source check and
 * rewrite at load time ({@code TemplateSource}), Python values and their printing
 * ({@code PyValues}, {@code PyFormat}, {@code PyNone}), Python's {@code str} and {@code dict}
 * methods ({@code PyMethods}), filters and tests with Python's semantics ({@code PyFilters},
 * {@code PyTests}), and HuggingFace's globals ({@code TemplateFunctions}). Whatever a template uses
 * beyond the constructs checked against Python's Jinja is refused when it is loaded, never rendered
 * differently.
 */
package io.kvprefix.tokenizer.internal.template;
