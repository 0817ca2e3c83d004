package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.BlockHasher;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.Tokenizers;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix tokenize} on the real Qwen3 files (docs/TOKENIZER.md section 7): the ids the
 * library gives, one JSON array per line, the block hashes with {@code --hash}, standard input with
 * {@code -}, and a bad line answered with one line naming it, exit 2, after the lines before it.
 */
class TokenizeCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> BODIES = List.of(
            "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi 🌍\"}]}",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"add_generation_prompt\":false,"
                    + "\"chat_template_kwargs\":{\"enable_thinking\":false}}",
            "{\"prompt\":\"Once upon a time\"}",
            "{\"prompt\":[1,2,3]}");

    @TempDir
    Path tmp;

    private static String expectedIds(Path model) throws Exception {
        StringBuilder b = new StringBuilder();
        try (PromptTokenizer t = Tokenizers.open("local:" + model)) {
            for (String body : BODIES) {
                ObjectNode n = (ObjectNode) JSON.readTree(body);
                int[] ids =
                        n.has("messages") ? t.chat(n).tokens() : t.completion(n).tokens();
                b.append(Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]")))
                        .append('\n');
            }
        }
        return b.toString();
    }

    @Test
    void printsTheIdsAndTheHashes() throws Exception {
        Path model = TokenizerData.model("qwen3");
        Path in = Files.writeString(tmp.resolve("in.jsonl"), String.join("\n", BODIES) + "\n");
        String expected = expectedIds(model);
        var r = CliRunner.run("tokenize", "--tokenizer", model.toString(), in.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(expected, r.out());
        var stdin = CliRunner.runWithInput(Files.readAllBytes(in), "tokenize", "--tokenizer", "local:" + model, "-");
        assertEquals(expected, stdin.out(), stdin.err());

        var h = CliRunner.run(
                "tokenize", "--tokenizer", model.toString(), "--hash", "--block-size", "4", in.toString());
        assertEquals(0, h.exit(), h.err());
        List<String> lines = h.out().lines().toList();
        List<String> idLines = expected.lines().toList();
        BlockHasher hasher = BlockHasher.of(4);
        for (int i = 0; i < lines.size(); i++) {
            int[] ids = JSON.readValue(idLines.get(i), int[].class);
            long[] local = new long[hasher.blockCount(ids.length)];
            long[] chain = new long[local.length];
            hasher.hashBlocks(ids, 0, ids.length, local, chain);
            String want =
                    Arrays.stream(chain).mapToObj(Long::toUnsignedString).collect(Collectors.joining(",", "[", "]"));
            assertEquals(want, lines.get(i));
        }
        assertEquals("[]", lines.get(3), "three tokens make no full block of 4");
    }

    @Test
    void aBadLineIsNamedAfterTheLinesBeforeIt() throws Exception {
        Path model = TokenizerData.model("qwen3");
        Path in = Files.writeString(
                tmp.resolve("bad.jsonl"),
                BODIES.get(0) + "\n" + BODIES.get(2) + "\n{\"messages\":[{\"content\":1}]}\n" + BODIES.get(2) + "\n",
                StandardCharsets.UTF_8);
        var r = CliRunner.run("tokenize", "--tokenizer", model.toString(), in.toString());
        assertEquals(2, r.exit(), r.err());
        assertEquals(
                expectedIds(model).lines().toList().subList(0, 1),
                r.out().lines().toList().subList(0, 1));
        assertEquals(2, r.out().lines().count(), "the two lines before the bad one: " + r.out());
        List<String> err = r.err().lines().toList();
        assertEquals(1, err.size(), r.err());
        assertTrue(err.get(0).startsWith("kvprefix tokenize: " + in + " line 3: "), err.get(0));
        assertTrue(err.get(0).contains("bad_request"), err.get(0));
    }
}
