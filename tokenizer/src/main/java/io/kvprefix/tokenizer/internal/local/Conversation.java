package io.kvprefix.tokenizer.internal.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.internal.Prompts;
import io.kvprefix.tokenizer.internal.template.PyNone;
import io.kvprefix.tokenizer.internal.template.PyValues;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An OpenAI chat body's messages and tools as vLLM hands them to the chat template
 * (docs/TOKENIZER.md section 3.3): each message reduced to the keys vLLM keeps (role, content,
 * tool_calls, reasoning, tool_call_id, name, task, a developer's tools), its content a string (text
 * parts joined with a newline, null content empty) or, for a template that loops over
 * {@code message.content}, a list of text parts; tool-call arguments parsed from their JSON string;
 * tools in the shape vLLM's request model dumps them.
 *
 * <p>Thread-safety: stateless.
 */
public final class Conversation {
    private Conversation() {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> TEXT_PARTS = Set.of("text", "input_text", "output_text");
    private static final String BILLING_HEADER = "x-anthropic-billing-header";

    /** The messages of {@code body} for the template; {@code openaiFormat} keeps content as a list of parts. */
    public static List<Object> messages(JsonNode messages, boolean openaiFormat) throws TokenizeException {
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw Prompts.bad("a chat body needs \"messages\", a non-empty array");
        }
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            out.add(message(messages.get(i), i, openaiFormat));
        }
        return out;
    }

    private static Map<String, Object> message(JsonNode m, int i, boolean openai) throws TokenizeException {
        if (!m.isObject() || !m.path("role").isTextual()) {
            throw Prompts.bad("messages[" + i + "] is not an object with a string \"role\"");
        }
        String role = m.get("role").textValue();
        List<String> texts = texts(m.get("content"), i, role.equals("system"));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("role", role);
        out.put("content", openai ? parts(texts) : String.join("\n", texts));
        if (role.equals("assistant")) {
            assistant(m, i, out);
        } else if (role.equals("tool") && m.has("tool_call_id")) {
            out.put("tool_call_id", PyValues.of(m.get("tool_call_id")));
        }
        if (m.path("name").isTextual()) {
            out.put("name", m.get("name").textValue());
        }
        if (m.path("task").isTextual()) {
            out.put("task", m.get("task").textValue());
        }
        if (role.equals("developer")) {
            out.put("tools", PyValues.of(m.get("tools")));
        }
        if (role.equals("tool") && openai) {
            out.put("content", String.join("\n", texts)); // vLLM gives tool messages plain text
        }
        return out;
    }

    private static List<String> texts(JsonNode content, int i, boolean system) throws TokenizeException {
        List<String> texts = new ArrayList<>();
        if (content == null || content.isNull()) {
            return texts;
        }
        if (content.isTextual()) {
            texts.add(content.textValue());
        } else if (content.isArray()) {
            for (JsonNode part : content) {
                String t = partText(part, i);
                if (t != null) {
                    texts.add(t);
                }
            }
        } else {
            throw Prompts.bad("messages[" + i + "].content is neither a string nor an array of parts");
        }
        return system ? withoutBillingHeader(texts) : texts;
    }

    private static String partText(JsonNode part, int i) throws TokenizeException {
        if (part.isTextual()) {
            return part.textValue();
        }
        String type = part.path("type").asText("text");
        if (!TEXT_PARTS.contains(type)) {
            throw Prompts.bad("messages[" + i + "] has a \"" + type
                    + "\" part; local mode tokenizes text only (multimodal prompts need render mode)");
        }
        JsonNode text = part.get("text");
        return text == null || text.isNull() ? null : text.asText();
    }

    /** vLLM drops the attribution header line Claude Code puts first in system text parts. */
    private static List<String> withoutBillingHeader(List<String> texts) {
        List<String> out = new ArrayList<>();
        for (String t : texts) {
            if (!t.startsWith(BILLING_HEADER)) {
                out.add(t);
                continue;
            }
            int nl = t.indexOf('\n');
            if (nl >= 0 && nl + 1 < t.length()) {
                out.add(t.substring(nl + 1));
            }
        }
        return out;
    }

    private static List<Object> parts(List<String> texts) {
        List<Object> out = new ArrayList<>();
        for (String t : texts) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("type", "text");
            p.put("text", t);
            out.add(p);
        }
        return out;
    }

    private static void assistant(JsonNode m, int i, Map<String, Object> out) throws TokenizeException {
        JsonNode calls = m.get("tool_calls");
        if (calls != null && !calls.isNull()) {
            if (!calls.isArray()) {
                throw Prompts.bad("messages[" + i + "].tool_calls is not an array");
            }
            if (!calls.isEmpty()) {
                List<Object> list = new ArrayList<>();
                for (JsonNode c : calls) {
                    list.add(toolCall(c, i));
                }
                out.put("tool_calls", list);
            }
        }
        JsonNode reasoning = m.has("reasoning") ? m.get("reasoning") : m.get("reasoning_content");
        if (reasoning != null && !reasoning.isNull()) {
            out.put("reasoning", reasoning.asText());
            out.put("reasoning_content", reasoning.asText());
        }
    }

    @SuppressWarnings("unchecked")
    private static Object toolCall(JsonNode c, int i) throws TokenizeException {
        JsonNode function = c.get("function");
        if (!c.isObject()
                || !c.path("type").asText("function").equals("function")
                || function == null
                || !function.isObject()) {
            throw Prompts.bad("messages[" + i + "].tool_calls holds something other than a function call");
        }
        Map<String, Object> call = (Map<String, Object>) PyValues.of(c);
        Map<String, Object> fn = (Map<String, Object>) call.get("function");
        fn.put("arguments", arguments(function.get("arguments")));
        return call;
    }

    /** vLLM parses a JSON string of arguments into an object; anything but an object becomes {}. */
    private static Object arguments(JsonNode a) {
        if (a == null || a.isNull() || (a.isTextual() && a.textValue().isEmpty())) {
            return new LinkedHashMap<>();
        }
        JsonNode parsed = a;
        if (a.isTextual()) {
            try {
                parsed = JSON.readTree(a.textValue());
            } catch (java.io.IOException e) {
                parsed = null;
            }
        }
        return parsed != null && parsed.isObject() ? PyValues.of(parsed) : new LinkedHashMap<>();
    }

    /** The request's tools as vLLM's {@code ChatCompletionToolsParam.model_dump()} gives them, or None. */
    public static Object tools(JsonNode tools) throws TokenizeException {
        if (tools == null || tools.isNull()) {
            return PyNone.NONE;
        }
        if (!tools.isArray()) {
            throw Prompts.bad("\"tools\" is not an array");
        }
        List<Object> out = new ArrayList<>();
        for (JsonNode t : tools) {
            JsonNode f = t.get("function");
            if (!t.isObject() || f == null || !f.isObject() || !f.path("name").isTextual()) {
                throw Prompts.bad("a tool is not {\"type\": \"function\", \"function\": {\"name\": ...}}");
            }
            Map<String, Object> fn = new LinkedHashMap<>();
            fn.put("name", f.get("name").textValue());
            fn.put("description", PyValues.of(f.get("description")));
            fn.put("parameters", PyValues.of(f.get("parameters")));
            optional(fn, f, "strict");
            optional(fn, f, "defer_loading");
            Map<String, Object> tool = new LinkedHashMap<>();
            tool.put("type", "function");
            tool.put("function", fn);
            optional(tool, t, "defer_loading");
            out.add(tool);
        }
        return out;
    }

    private static void optional(Map<String, Object> into, JsonNode from, String key) {
        if (from.hasNonNull(key)) {
            into.put(key, PyValues.of(from.get(key)));
        }
    }
}
