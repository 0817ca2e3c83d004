package io.kvprefix.standin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * The incremental detokenizer gives, piece by piece, exactly the text of decoding the whole output at
 * once, on real tokenizers, for random token sequences and for text full of characters that byte-level
 * BPE splits across tokens.
 */
class LocalTokensTest {
    @Test
    void thePiecesAddUpToTheWholeDecode() throws Exception {
        for (String model : new String[] {"qwen3", "llama3_1"}) {
            Path dir = TokenizerData.model(model);
            try (LocalTokens t = LocalTokens.open(dir);
                    HuggingFaceTokenizer hf = HuggingFaceTokenizer.newInstance(
                            dir.resolve("tokenizer.json"), Map.of("addSpecialTokens", "false"))) {
                assertTrue(t.vocabSize() > 100_000, model + ": " + t.vocabSize());
                SplittableRandom rnd = new SplittableRandom(17);
                for (int round = 0; round < 30; round++) {
                    long[] ids = round % 2 == 0
                            ? hf.encode("Grüße aus Zürich — 日本語のテキスト 🙂🙃 ünïcödé " + round)
                                    .getIds()
                            : random(rnd, 40, t.vocabSize());
                    IntFunction<String> d = t.detokenizer();
                    StringBuilder pieces = new StringBuilder();
                    for (long id : ids) {
                        pieces.append(d.apply((int) id));
                    }
                    String whole = hf.decode(ids, true);
                    if (whole.endsWith("\uFFFD")) { // the last character is incomplete: held back
                        assertTrue(whole.startsWith(pieces.toString()), model + " round " + round);
                    } else {
                        assertEquals(whole, pieces.toString(), model + " round " + round);
                    }
                }
            }
        }
    }

    private static long[] random(SplittableRandom rnd, int n, int vocab) {
        long[] ids = new long[n];
        for (int i = 0; i < n; i++) {
            ids[i] = rnd.nextInt(vocab);
        }
        return ids;
    }
}
