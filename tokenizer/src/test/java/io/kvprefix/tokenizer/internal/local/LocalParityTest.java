package io.kvprefix.tokenizer.internal.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizerOptions;
import io.kvprefix.tokenizer.internal.template.PyFormat;
import io.kvprefix.tokenizer.internal.template.PyValues;
import io.kvprefix.tokenizer.testing.Corpus;
import io.kvprefix.tokenizer.testing.References;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local mode against implementations nobody here wrote (docs/TOKENIZER.md section 5.1), on a seeded
 * corpus of at least 2,000 requests per model: HuggingFace's JavaScript tokenizers and chat templates
 * give the same ids for every request that avoids where its Jinja differs from Python's; Python's own
 * Jinja renders every chat request's template to the same text; and the segment cache gives the ids
 * of whole-text tokenization for every request. gpt-oss has no chat template: its completions are
 * compared, and chat is refused.
 */
class LocalParityTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void qwen3() throws Exception {
        Corpus c = new Corpus(3001, List.of("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>"));
        List<Corpus.Request> requests = new ArrayList<>(c.chats(2000, true, true));
        requests.addAll(c.completions(300));
        check("qwen3", requests);
    }

    @Test
    void llama31() throws Exception {
        Corpus c = new Corpus(3002, List.of("<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>"));
        List<Corpus.Request> requests = new ArrayList<>(c.chats(2000, false, false));
        requests.addAll(c.completions(300));
        check("llama3_1", requests);
    }

    @Test
    void gptOssCompletionsAndNoChat() throws Exception {
        Corpus c = new Corpus(3003, List.of("<|start|>", "<|end|>", "<|message|>", "<|endoftext|>"));
        check("gptoss", c.completions(2000));
        try (LocalTokenizer t = LocalTokenizer.open(TokenizerData.model("gptoss"), TokenizerOptions.defaults())) {
            ObjectNode chat = (ObjectNode) JSON.readTree("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
            TokenizeException e = assertThrows(TokenizeException.class, () -> t.chat(chat));
            assertEquals("no_chat_template", e.reason());
            assertTrue(e.getMessage().contains("no chat_template"), e.getMessage());
        }
    }

    /**
     * The references' inputs come first, so that Node and Python run while this JVM tokenizes the same
     * requests (on two cores the three overlap instead of following each other); then every answer is
     * compared.
     */
    private void check(String model, List<Corpus.Request> requests) throws Exception {
        Path dir = TokenizerData.model(model);
        List<String> jsLines = new ArrayList<>();
        List<String> pyLines = new ArrayList<>();
        List<int[]> javaIds = new ArrayList<>();
        List<String> javaText = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        try (LocalTokenizer t = LocalTokenizer.open(dir, TokenizerOptions.defaults())) {
            assertNull(t.segmentCacheOff(), model + ": the segment cache is on (its load-time proof passed)");
            for (Corpus.Request r : requests) {
                if (r.chat()) {
                    Map<String, Object> vars = t.templateVariables(r.body());
                    pyLines.add(PyFormat.json(
                            Map.of("template", t.templateSource(r.body()), "context", vars),
                            false,
                            null,
                            null,
                            null,
                            false));
                    jsLines.add(jsChat(r.body(), vars));
                } else {
                    jsLines.add(jsCompletion(r.body()));
                }
            }
            CompletableFuture<List<JsonNode>> js =
                    reference(() -> References.huggingFaceJs(dir, write(model + "-js", jsLines)));
            CompletableFuture<List<JsonNode>> py = pyLines.isEmpty()
                    ? CompletableFuture.completedFuture(List.of())
                    : reference(() -> References.pythonJinja(write(model + "-py", pyLines)));
            for (int i = 0; i < requests.size(); i++) {
                Corpus.Request r = requests.get(i);
                int[] ids;
                if (r.chat()) {
                    ids = t.chat(r.body()).tokens();
                    String text = t.renderChat(r.body());
                    javaText.add(text);
                    int[] whole = t.encodeWhole(text, false);
                    if (!Arrays.equals(ids, whole)) {
                        failures.add(model + " #" + i + ": segment cache " + diff(ids, whole));
                    }
                } else {
                    ids = t.completion(r.body()).tokens();
                    javaText.add(null);
                }
                javaIds.add(ids);
            }
            System.err.printf(
                    "%s: segment cache %d hits, %d misses, %d entries%n",
                    model,
                    t.segmentCache().hits(),
                    t.segmentCache().misses(),
                    t.segmentCache().entries());
            compareJs(model, requests, jsLines.size(), answers(js), javaIds, failures);
            comparePython(model, requests, pyLines.size(), answers(py), javaText, failures);
        }
        assertTrue(
                failures.isEmpty(),
                failures.size() + " differences, the first ones:\n"
                        + String.join("\n", failures.subList(0, Math.min(10, failures.size()))));
    }

    /** A reference run over a whole corpus file. */
    private interface ReferenceRun {
        List<JsonNode> run() throws Exception;
    }

    /** Starts {@code run} on a thread of its own (the reference is a process: the thread only waits for it). */
    private static CompletableFuture<List<JsonNode>> reference(ReferenceRun run) {
        CompletableFuture<List<JsonNode>> f = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        f.complete(run.run());
                    } catch (Throwable e) {
                        f.completeExceptionally(e);
                    }
                },
                "reference");
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static List<JsonNode> answers(CompletableFuture<List<JsonNode>> f) throws Exception {
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : new IllegalStateException(e.getCause());
        }
    }

    private Path write(String name, List<String> lines) throws Exception {
        return Files.writeString(tmp.resolve(name + ".jsonl"), String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    }

    private void compareJs(
            String model,
            List<Corpus.Request> requests,
            int lines,
            List<JsonNode> js,
            List<int[]> ids,
            List<String> failures) {
        assertEquals(lines, js.size(), "one reply per request");
        int compared = 0;
        for (int i = 0; i < js.size(); i++) {
            if (!requests.get(i).jsSafe()) {
                continue;
            }
            compared++;
            JsonNode r = js.get(i);
            if (r.has("error")) {
                failures.add(model + " #" + i + ": HuggingFace JS failed: "
                        + r.get("error").asText());
                continue;
            }
            int[] expected = new int[r.get("ids").size()];
            for (int k = 0; k < expected.length; k++) {
                expected[k] = r.get("ids").get(k).asInt();
            }
            if (!Arrays.equals(expected, ids.get(i))) {
                failures.add(model + " #" + i + ": vs HuggingFace JS " + diff(ids.get(i), expected) + " body "
                        + abbreviate(requests.get(i).body().toString()));
            }
        }
        System.err.printf("%s: %d requests compared with HuggingFace JS%n", model, compared);
        assertTrue(compared >= Math.min(1700, requests.size() * 8 / 10), model + ": compared " + compared);
    }

    private void comparePython(
            String model,
            List<Corpus.Request> requests,
            int lines,
            List<JsonNode> py,
            List<String> text,
            List<String> failures) {
        if (lines == 0) {
            return;
        }
        assertEquals(lines, py.size(), "one render per chat request");
        int k = 0;
        for (int i = 0; i < requests.size(); i++) {
            if (!requests.get(i).chat()) {
                continue;
            }
            JsonNode r = py.get(k++);
            String expected = r.has("text")
                    ? r.get("text").asText()
                    : "ERROR " + r.get("error").asText();
            if (!expected.equals(text.get(i))) {
                failures.add(model + " #" + i + ": vs Python Jinja: " + abbreviate(PyFormat.repr(expected)) + " but "
                        + abbreviate(PyFormat.repr(text.get(i))));
            }
        }
        System.err.printf("%s: %d chat requests rendered by Python's Jinja too%n", model, k);
    }

    private static String jsChat(ObjectNode body, Map<String, Object> vars) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("kind", "chat");
        line.put("messages", vars.get("messages"));
        line.put("tools", vars.get("tools"));
        line.put("documents", vars.get("documents"));
        line.put("add_generation_prompt", vars.get("add_generation_prompt"));
        line.put("kwargs", body.has("chat_template_kwargs") ? PyValues.of(body.get("chat_template_kwargs")) : Map.of());
        return PyFormat.json(line, false, null, null, null, false);
    }

    private static String jsCompletion(ObjectNode body) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("kind", "completion");
        line.put("prompt", body.get("prompt").asText());
        line.put(
                "add_special_tokens",
                !body.has("add_special_tokens")
                        || body.get("add_special_tokens").asBoolean());
        return PyFormat.json(line, false, null, null, null, false);
    }

    private static String diff(int[] got, int[] expected) {
        int i = 0;
        while (i < got.length && i < expected.length && got[i] == expected[i]) {
            i++;
        }
        return "differs at token " + i + " (lengths " + got.length + " and " + expected.length + "): got "
                + Arrays.toString(Arrays.copyOfRange(got, i, Math.min(got.length, i + 6))) + ", expected "
                + Arrays.toString(Arrays.copyOfRange(expected, i, Math.min(expected.length, i + 6)));
    }

    private static String abbreviate(String s) {
        return s.length() > 400 ? s.substring(0, 400) + "..." : s;
    }
}
