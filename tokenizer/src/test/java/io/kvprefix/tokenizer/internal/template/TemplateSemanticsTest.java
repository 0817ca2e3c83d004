package io.kvprefix.tokenizer.internal.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.tokenizer.testing.References;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Python Jinja's semantics where vLLM's tokens depend on them (docs/TOKENIZER.md section 3.2), each
 * construct rendered by kvprefix and by Python's own Jinja2 set up as HuggingFace sets it up (the
 * second reference, {@code reference/render_jinja.py}): booleans and None printed as Python prints
 * them, {@code strip(chars)}, {@code split} with a literal separator and trailing empties, slices
 * with a step, {@code |items}, {@code namespace}, {@code loop}, tests, {@code tojson}, string
 * literal escapes, whitespace control with {@code trim_blocks} and {@code lstrip_blocks}. And what is
 * not rendered with Python's semantics is refused when the template is loaded, naming the construct.
 */
class TemplateSemanticsTest {
    @TempDir
    Path tmp;

    private static final String[] CASES = {
        "{{ True }} {{ False }} {{ none }} {{ None }} {{ x }}|{{ undefined_name }}|",
        "{{ [1, 'a', none, true, 1.5, {'k': \"it's\"}] }} {{ {'a': 1, 'b': 'x'} }} {{ 'q\"uote' }}",
        "{{ 1.0 }} {{ 2.50 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 10 / 4 }} {{ 10 // 4 }} {{ -0.5 }}",
        "{{ 'xxhixx'.strip('x') }}|{{ '\\n\\n a \\n'.strip('\\n') }}|{{ ' \\u00a0hi\\u3000 '.strip() }}|{{ 'abab'.lstrip('a') }}|{{ 'abab'.rstrip('b') }}",
        "{{ 'a</think>'.split('</think>') }}|{{ 'a b  c\\t'.split() }}|{{ 'a.b.c'.split('.', 1) }}|{{ 'x|y'.split('|') }}",
        "{{ 'Hello'.startswith('He') }}{{ 'Hello'.endswith(('x', 'lo')) }}{{ 'a-b-c'.replace('-', '+', 1) }}{{ 'hello world'.title() }}{{ 'hELLO'.capitalize() }}{{ 'AbC'.upper() }}{{ 'AbC'.lower() }}",
        "{% for m in [1, 2, 3][::-1] %}{{ m }}{% endfor %}|{{ 'a😀b'[::-1] }}|{{ 'a😀b'[1:] }}|{{ [1, 2, 3, 4][-2:] }}|{{ [1, 2, 3, 4][::2] }}|{{ msgs[1:] }}",
        "{% for k, v in {'a': 1, 'b': 2}|items %}{{ k }}={{ v }},{% endfor %}{% for k, v in {'c': 3}.items() %}{{ k }}{{ v }}{% endfor %}{{ {'a': 1}.get('z', 'dflt') }}",
        "{% set ns = namespace(a=true, n=msgs|length - 1) %}{% set ns.a = false %}{{ ns.a }} {{ ns.n }}",
        "{% for m in msgs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex0 }};{% endfor %}",
        "{{ x is none }}{{ x is defined }}{{ nothing is defined }}{{ 1 is true }}{{ true is true }}{{ false is false }}{{ 0 is false }}{{ 'a' is string }}{{ 'a' is iterable }}{{ msgs is sequence }}{{ {} is mapping }}{{ 3 is integer }}",
        "{{ {'a': [1, 'b\"', none, true, 1.5, '\\n\\u0001é']} | tojson }}|{{ {'b': 1, 'a': []} | tojson(indent=2, sort_keys=true) }}|{{ 'ü' | tojson(ensure_ascii=true) }}",
        "{{ '  a  '|trim }}|{{ 'xax'|trim('x') }}|{{ ['a', true, none]|join('-') }}|{{ 'abc'|length }}{{ '😀'|length }}|{{ true|string }}|{{ 'abc'|reverse }}",
        "{{ '\\u00e9\\x41\\101\\tq' }}|{{ \"it's\" }}|{{ 'a\\\\b' }}",
        "  {% if true %}\nX\n  {% endif %}\nY\n  {%- if true -%}  Z  {%- endif %}  {{- ' W ' -}}  .\n",
        "{% macro f(v, w='d') %}[{{ v }}{{ w }}]{% endmacro %}{{ f(1) }}{{ f(none, w=true) }}",
        "{% for m in msgs %}{% if loop.index0 == 1 %}{% break %}{% endif %}{{ m }}{% endfor %}{% for i in range(3) %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}",
        "{% generation %}gen {{ 1 }}{% endgeneration %}{{ 'b' in 'abc' }}{{ 'z' not in 'abc' }}{{ 1 in [1, 2] }}",
        "{{ raise_exception('boom') }}",
    };

    @Test
    void rendersAsPythonJinja() throws Exception {
        List<String> lines = new ArrayList<>();
        List<String> ours = new ArrayList<>();
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("x", PyNone.NONE);
        ctx.put("msgs", new ArrayList<>(List.of("a", "b", "c")));
        for (String c : CASES) {
            lines.add(PyFormat.json(Map.of("template", c, "context", ctx), false, null, null, null, false));
            try {
                ours.add(ChatTemplate.compile(c).render(new LinkedHashMap<>(ctx)));
            } catch (ChatTemplate.RenderFailure e) {
                ours.add(null);
            }
        }
        Path in =
                Files.writeString(tmp.resolve("cases.jsonl"), String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        List<JsonNode> py = References.pythonJinja(in);
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < CASES.length; i++) {
            String expected = py.get(i).has("text") ? py.get(i).get("text").asText() : null;
            if (!java.util.Objects.equals(expected, ours.get(i))) {
                wrong.add(CASES[i] + "\n  Python: " + PyFormat.repr(expected) + "\n  kvprefix: "
                        + PyFormat.repr(ours.get(i)));
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
        assertTrue(py.get(CASES.length - 1).has("error"), "raise_exception raises in Python too");
    }

    @Test
    void constructsWithoutPythonSemanticsAreRefusedAtLoad() {
        Map<String, String> refused = Map.of(
                "{{ a ~ b }}", "the ~ operator",
                "{{ x|default('y') }}", "the filter |default",
                "{{ x.append(1) }}", "the method .append()",
                "{{ cycler(1, 2) }}", "the function cycler()",
                "{% for m in msgs %}{{ loop.previtem }}{% endfor %}", "loop.previtem",
                "{% raw %}x{% endraw %}", "the statement {% raw %}",
                "{{ x is divisibleby(3) }}", "the test 'is divisibleby'");
        refused.forEach((template, construct) -> {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> ChatTemplate.compile(template));
            assertTrue(
                    e.getMessage().contains(construct) && e.getMessage().contains("docs/TOKENIZER.md section 3.2"),
                    template + ": " + e.getMessage());
        });
    }

    @Test
    void sourcesAreNormalisedAsJinjasLexerDoes() {
        assertEquals("a\nb\n", TemplateSource.pythonLines("a\r\nb\r\n\n"));
        assertEquals("a\nb", TemplateSource.pythonLines("a\rb\n"));
        assertEquals(
                "a\u2028b", TemplateSource.pythonLines("a\u2028b"), "only \\r\\n, \\r and \\n are line breaks there");
    }

    @Test
    void pythonValueFormats() {
        assertEquals("1e+16", PyFormat.floatRepr(1e16));
        assertEquals("1000000000000000.0", PyFormat.floatRepr(1e15));
        assertEquals("1.5e-07", PyFormat.floatRepr(1.5e-7));
        assertEquals("0.1", PyFormat.floatRepr(0.1));
        assertEquals("-0.0", PyFormat.floatRepr(-0.0));
        assertEquals("123.456", PyFormat.floatRepr(123.456));
        assertEquals("\"it's\"", PyFormat.repr("it's"));
        assertEquals("'a\\nb\\x00\\u200b'", PyFormat.repr("a\nb\u0000\u200b"));
        assertEquals("[True, None, 'x']", PyFormat.repr(List.of(true, PyNone.NONE, "x")));
        assertEquals(List.of("a", "", ""), PyStrings.split("a||", "|", -1));
        assertEquals(List.of(), PyStrings.split(" \u00a0 ", null, -1));
    }
}
