package io.kvprefix.tokenizer.internal.local;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.tokenizer.internal.template.PyFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * vLLM's normalisation of chat messages and tools before the template sees them (docs/TOKENIZER.md
 * section 3.3), expected values written from vLLM's {@code vllm/renderers/chat_utils/parse_chat_message.py}
 * and {@code parse_chat_message_content.py} @ {@code be90fe16} and
 * {@code vllm/entrypoints/generate/base/protocol.py} @ {@code 022e555d}.
 */
class ConversationTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String messages(String json, boolean openai) throws Exception {
        return PyFormat.repr(Conversation.messages(JSON.readTree(json), openai));
    }

    @Test
    void contentBecomesAStringOrAListOfTextParts() throws Exception {
        String m =
                "[{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"x-anthropic-billing-header: cch=1\\nkeep\"}]},"
                        + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},\"b\",{\"type\":\"text\",\"text\":null}],\"extra\":1},"
                        + "{\"role\":\"assistant\",\"content\":null,\"name\":\"bot\"}]";
        assertEquals(
                "[{'role': 'system', 'content': 'keep'}, {'role': 'user', 'content': 'a\\nb'},"
                        + " {'role': 'assistant', 'content': '', 'name': 'bot'}]",
                messages(m, false));
        assertEquals(
                "[{'role': 'system', 'content': [{'type': 'text', 'text': 'keep'}]}, {'role': 'user', 'content':"
                        + " [{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 'b'}]},"
                        + " {'role': 'assistant', 'content': [], 'name': 'bot'}]",
                messages(m, true));
    }

    @Test
    void toolCallArgumentsAreParsedAndReasoningKept() throws Exception {
        String m = "[{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\"r\",\"tool_calls\":["
                + "{\"id\":\"1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1}\"}},"
                + "{\"id\":\"2\",\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"not json\"}},"
                + "{\"id\":\"3\",\"type\":\"function\",\"function\":{\"name\":\"h\",\"arguments\":\"[1]\"}}]},"
                + "{\"role\":\"assistant\",\"content\":\"x\",\"tool_calls\":[]},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"1\",\"content\":[{\"type\":\"text\",\"text\":\"t1\"},{\"type\":\"text\",\"text\":\"t2\"}]}]";
        assertEquals(
                "[{'role': 'assistant', 'content': '', 'tool_calls': [{'id': '1', 'type': 'function', 'function':"
                        + " {'name': 'f', 'arguments': {'a': 1}}}, {'id': '2', 'type': 'function', 'function': {'name': 'g',"
                        + " 'arguments': {}}}, {'id': '3', 'type': 'function', 'function': {'name': 'h', 'arguments': {}}}],"
                        + " 'reasoning': 'r', 'reasoning_content': 'r'}, {'role': 'assistant', 'content': 'x'},"
                        + " {'role': 'tool', 'content': 't1\\nt2', 'tool_call_id': '1'}]",
                messages(m, false));
    }

    @Test
    void toolsTakeTheShapeVllmDumps() throws Exception {
        String t = "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"extra\":1}},"
                + "{\"type\":\"function\",\"function\":{\"name\":\"g\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"},\"strict\":true}}]";
        assertEquals(
                "[{'type': 'function', 'function': {'name': 'f', 'description': None, 'parameters': None}},"
                        + " {'type': 'function', 'function': {'name': 'g', 'description': 'd', 'parameters': {'type':"
                        + " 'object'}, 'strict': True}}]",
                PyFormat.repr(Conversation.tools(JSON.readTree(t))));
        assertEquals("None", PyFormat.repr(Conversation.tools(null)));
        assertEquals(List.of(), Conversation.tools(JSON.readTree("[]")));
    }
}
