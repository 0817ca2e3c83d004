package io.kvprefix.tokenizer.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The parity corpus (docs/TOKENIZER.md section 5.1): seeded OpenAI request bodies with system
 * prompts, 1 to 30 turns, tools and tool calls, reasoning, Unicode (CJK, RTL, combining marks, emoji
 * with joiners), code, long documents, empty content and whitespace edge cases. A request is
 * {@code jsSafe} when it avoids what HuggingFace's JavaScript Jinja renders differently from Python's
 * (the argument of {@code strip}, which it ignores; floats in {@code tojson}; whitespace that only one
 * of Python's and JavaScript's {@code strip} removes): those requests are compared with the
 * JavaScript implementation, and every request with Python's Jinja.
 *
 * <p>Thread-safety: not thread-safe (one random generator).
 */
public final class Corpus {
    /** One request of the corpus. */
    public record Request(ObjectNode body, boolean chat, boolean jsSafe) {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] WORDS =
            ("the of and to in is that for it as was with be by on not he I this are or his "
                            + "from at which but have an they you were her she there been if more when will would who so no "
                            + "router cache token prefix engine request latency block hash model serve prompt conversation")
                    .split(" ");
    private static final String[] UNICODE = {
        "日本語の文章です。",
        "中文测试，标点符号！",
        "Привет, мир!",
        "مرحبا بالعالم",
        "שלום עולם",
        "한국어 텍스트",
        "ภาษาไทย",
        "हिन्दी पाठ",
        "Ελληνικά",
        "café naïve résumé",
        "e\u0301 a\u0300",
        "ﬁ ﬂ",
        "ß ẞ",
        "😀",
        "👍🏽",
        "👨‍👩‍👧‍👦",
        "🏳️‍🌈",
        "🇫🇷",
        "∑∫√∞",
        "™ © ®",
        "\u200b",
        "Ⅻ",
        "𝕏𝕪𝕫"
    };
    private static final String[] CODE = {
        "```python\ndef add(a, b):\n    return a + b\n```",
        "```json\n{\"key\": [1, 2, 3], \"nested\": {\"x\": null}}\n```",
        "function f(x) {\n\treturn x * 2; // double\n}",
        "SELECT id, name FROM users WHERE age > 30 ORDER BY name;",
        "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); }",
        "<div class=\"a\">{{ not_a_template }} {% neither %}</div>",
        "    indented line\n        more indented\n\ttab indented",
    };
    private static final String[] SAFE_EDGES = {"", "", "", " ", "  ", "\n", "\n\n", "\t", " \n"};
    private static final String[] EXOTIC_EDGES = {
        "\u00a0", "\u3000", "\u0085", "\u001c", "\ufeff", "\u2028", "\r\n", "\u000b"
    };

    private final SplittableRandom rnd;
    private final List<String> specials;

    /** A corpus from this seed, with these special-token strings sometimes placed inside message text. */
    public Corpus(long seed, List<String> specials) {
        this.rnd = new SplittableRandom(seed);
        this.specials = specials;
    }

    /** {@code n} chat requests; {@code withTools} adds tools and tool calls, {@code thinking} reasoning. */
    public List<Request> chats(int n, boolean withTools, boolean thinking) {
        List<Request> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            boolean jsSafe = rnd.nextInt(100) < 85;
            out.add(new Request(chat(jsSafe, withTools, thinking), true, jsSafe));
        }
        return out;
    }

    /** {@code n} completion requests with a string prompt. */
    public List<Request> completions(int n) {
        List<Request> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ObjectNode b = JSON.createObjectNode();
            b.put("prompt", text(true, rnd.nextInt(100) < 3));
            if (rnd.nextInt(100) < 20) {
                b.put("add_special_tokens", rnd.nextBoolean());
            }
            out.add(new Request(b, false, true));
        }
        return out;
    }

    private ObjectNode chat(boolean jsSafe, boolean withTools, boolean thinking) {
        ObjectNode b = JSON.createObjectNode();
        ArrayNode m = b.putArray("messages");
        boolean tools = withTools && rnd.nextInt(100) < 25;
        if (tools) {
            b.set("tools", tools(jsSafe));
        }
        if (rnd.nextInt(100) < 50) {
            m.addObject().put("role", "system").put("content", text(jsSafe, false));
        }
        int turns = 1 + rnd.nextInt(rnd.nextInt(100) < 80 ? 6 : 30);
        for (int t = 0; t < turns; t++) {
            content(m.addObject().put("role", "user"), jsSafe, rnd.nextInt(100) < 2);
            if (t == turns - 1 && rnd.nextInt(100) < 85) {
                break;
            }
            if (tools && rnd.nextInt(100) < 40) {
                toolCall(m, jsSafe);
            }
            assistant(m.addObject().put("role", "assistant"), jsSafe, thinking);
        }
        if (rnd.nextInt(100) < 80) {
            if (rnd.nextInt(100) < 70) {
                b.put("add_generation_prompt", true);
            }
        } else {
            b.put("add_generation_prompt", false);
        }
        if (thinking && rnd.nextInt(100) < 30) {
            b.putObject("chat_template_kwargs").put("enable_thinking", rnd.nextBoolean());
        }
        return b;
    }

    private void content(ObjectNode msg, boolean jsSafe, boolean longDocument) {
        int kind = rnd.nextInt(100);
        if (kind < 4) {
            msg.put("content", "");
        } else if (kind < 10) {
            ArrayNode parts = msg.putArray("content"); // text parts: vLLM joins them with \n
            int n = 1 + rnd.nextInt(3);
            for (int i = 0; i < n; i++) {
                parts.addObject().put("type", "text").put("text", text(jsSafe, false));
            }
        } else {
            msg.put("content", text(jsSafe, longDocument));
        }
    }

    private void assistant(ObjectNode msg, boolean jsSafe, boolean thinking) {
        // JavaScript's lstrip('\n') strips every kind of whitespace, and templates apply it to an
        // assistant's content and to what follows a </think> in it
        String answer = jsSafe
                ? nonSpaceStart(text(true, false).replace("<think>", "").replace("</think>", ""))
                : text(false, false);
        if (thinking && rnd.nextInt(100) < 30) {
            String reasoning = words(3 + rnd.nextInt(20));
            String pad = jsSafe ? "\n" : (rnd.nextBoolean() ? " \n " : "\n\n  ");
            String after = jsSafe ? "\n\n" + answer : (rnd.nextBoolean() ? " " : "\n ") + answer;
            if (rnd.nextBoolean()) {
                msg.put("content", "<think>" + pad + reasoning + pad + "</think>" + after);
            } else {
                msg.put("reasoning_content", pad.strip().isEmpty() && !jsSafe ? " " + reasoning + " " : reasoning);
                msg.put("content", answer);
            }
        } else {
            msg.put("content", answer);
        }
    }

    private static String nonSpaceStart(String s) {
        String t = s.stripLeading();
        return t.isEmpty() ? "ok" : t;
    }

    private void toolCall(ArrayNode m, boolean jsSafe) {
        ObjectNode a = m.addObject().put("role", "assistant");
        if (rnd.nextBoolean()) {
            a.putNull("content");
        } else {
            a.put("content", nonSpaceStart(words(2 + rnd.nextInt(6))));
        }
        ArrayNode calls = a.putArray("tool_calls");
        int n = 1 + rnd.nextInt(2);
        for (int i = 0; i < n; i++) {
            ObjectNode c = calls.addObject()
                    .put("id", "call_" + rnd.nextInt(1_000_000))
                    .put("type", "function");
            ObjectNode f = c.putObject("function").put("name", rnd.nextBoolean() ? "get_weather" : "search_docs");
            ObjectNode args = JSON.createObjectNode()
                    .put("query", words(1 + rnd.nextInt(4)))
                    .put("limit", rnd.nextInt(50));
            if (!jsSafe) {
                args.put("threshold", rnd.nextBoolean() ? 0.5 : 1.0e-7);
            }
            if (rnd.nextBoolean()) {
                f.put("arguments", args.toString()); // the OpenAI form: a JSON string, which vLLM parses
            } else {
                f.set("arguments", args);
            }
            m.addObject()
                    .put("role", "tool")
                    .put("tool_call_id", c.get("id").asText())
                    .put("content", text(jsSafe, false));
        }
    }

    private ArrayNode tools(boolean jsSafe) {
        ArrayNode tools = JSON.createArrayNode();
        int n = 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            ObjectNode f = tools.addObject().put("type", "function").putObject("function");
            f.put("name", i == 0 ? "get_weather" : "search_docs" + i);
            if (rnd.nextInt(100) < 80) {
                f.put("description", text(jsSafe, false));
            }
            ObjectNode p = f.putObject("parameters").put("type", "object");
            ObjectNode props = p.putObject("properties");
            props.putObject("query").put("type", "string").put("description", words(4));
            ObjectNode limit = props.putObject("limit").put("type", "integer").put("minimum", 1);
            if (!jsSafe) {
                limit.put("default", 2.5);
            }
            p.putArray("required").add("query");
        }
        return tools;
    }

    /** A text: words, sentences, code, Unicode, special tokens, whitespace at the edges; sometimes a long document. */
    public String text(boolean jsSafe, boolean longDocument) {
        StringBuilder b = new StringBuilder(edge(jsSafe));
        int pieces = longDocument ? 300 + rnd.nextInt(900) : 1 + rnd.nextInt(8);
        for (int i = 0; i < pieces; i++) {
            int k = rnd.nextInt(100);
            if (k < 55) {
                b.append(sentence());
            } else if (k < 70) {
                b.append(UNICODE[rnd.nextInt(UNICODE.length)]);
            } else if (k < 80) {
                b.append(CODE[rnd.nextInt(CODE.length)]);
            } else if (k < 83 && !specials.isEmpty()) {
                b.append(specials.get(rnd.nextInt(specials.size())));
            } else if (k < 93) {
                b.append(new String[] {"\n", "\n\n", "  ", "\t", " \n", "\n\n\n"}[rnd.nextInt(6)]);
            } else {
                b.append(rnd.nextInt(1_000_000)).append(' ');
            }
            if (rnd.nextInt(4) == 0) {
                b.append(' ');
            }
        }
        return b.append(edge(jsSafe)).toString();
    }

    private String edge(boolean jsSafe) {
        if (!jsSafe && rnd.nextInt(100) < 30) {
            return EXOTIC_EDGES[rnd.nextInt(EXOTIC_EDGES.length)];
        }
        return SAFE_EDGES[rnd.nextInt(SAFE_EDGES.length)];
    }

    private String sentence() {
        String s = words(3 + rnd.nextInt(15));
        return Character.toUpperCase(s.charAt(0))
                + s.substring(1)
                + new String[] {". ", "? ", "! ", ", ", ": "}[rnd.nextInt(5)];
    }

    private String words(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append(i > 0 ? " " : "").append(WORDS[rnd.nextInt(WORDS.length)]);
        }
        return b.toString();
    }
}
