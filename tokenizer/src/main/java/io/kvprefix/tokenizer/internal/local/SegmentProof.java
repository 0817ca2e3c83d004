package io.kvprefix.tokenizer.internal.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.TokenizerOptions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Decides at load time whether the segment cache is exact for a tokenizer (docs/TOKENIZER.md section
 * 6): off when an added token strips or matches whole words or is normalised (the split would then
 * depend on its neighbours), and otherwise on only if segment-by-segment encoding gives exactly the
 * whole-text ids on a probe set: the chat template's rendering of a sample conversation, and seeded
 * strings that mix every added token with whitespace, punctuation, code and non-Latin text around
 * it. The parity test checks the same on the whole corpus.
 *
 * <p>Thread-safety: stateless.
 */
final class SegmentProof {
    private SegmentProof() {}

    /** The cache to use (null when off) and why it is off (null when on). */
    record Verdict(SegmentCache cache, String reason) {}

    private static final String[] FRAGMENTS = {
        "",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\t",
        " \n ",
        "a",
        "hello world",
        " Hello",
        "é",
        "naïve café",
        "日本語のテキスト",
        "😀👍🏽",
        "\u00a0",
        "\u3000",
        "<",
        ">",
        "|",
        "<|",
        "x<",
        "123456",
        "1 2 3",
        "def f(x):\n    return x + 1\n",
        "{\"a\": [1, 2]}",
        "'s",
        "don't",
        "\r\n",
        "...",
        "  indented",
        "end.  ",
        "ß",
        "ʼ",
        "\u200b",
        "ﬁ",
        "Å"
    };
    private static final int PROBES = 400;

    static Verdict check(TokenizerFiles files, HfTokenizer tokenizer, TokenizerOptions options, String sample) {
        if (options.segmentCacheEntries() == 0 || options.segmentCacheBytes() == 0) {
            return new Verdict(null, "turned off by the options");
        }
        for (var t : files.addedTokens()) {
            if (t.lstrip() || t.rstrip() || t.singleWord() || (t.normalized() && files.hasNormalizer())) {
                return new Verdict(
                        null,
                        "added token " + t.content()
                                + " strips, matches single words or is normalised: its split depends on its neighbours");
            }
        }
        SplittableRandom rnd = new SplittableRandom(20261201L);
        List<String> probes = new ArrayList<>();
        if (sample != null) {
            probes.add(sample);
        }
        List<TokenizerFiles.AddedToken> added = files.addedTokens();
        for (int i = 0; i < PROBES; i++) {
            StringBuilder b = new StringBuilder();
            int parts = 1 + rnd.nextInt(6);
            for (int p = 0; p < parts; p++) {
                b.append(FRAGMENTS[rnd.nextInt(FRAGMENTS.length)]);
                if (!added.isEmpty() && rnd.nextInt(3) > 0) {
                    b.append(added.get(rnd.nextInt(added.size())).content());
                }
            }
            probes.add(b.toString());
        }
        SegmentCache probeCache = new SegmentCache(added, 1 << 12, 1 << 24);
        for (String p : probes) {
            int[] whole = tokenizer.encode(p, false);
            int[] pieces = probeCache.encode(p, piece -> tokenizer.encode(piece, false));
            if (!Arrays.equals(whole, pieces)) {
                return new Verdict(null, "segment-by-segment ids differ from whole-text ids on " + quote(p));
            }
        }
        return new Verdict(new SegmentCache(added, options.segmentCacheEntries(), options.segmentCacheBytes()), null);
    }

    private static String quote(String s) {
        String q = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        return "\"" + q.replace("\n", "\\n") + "\"";
    }

    /** A small conversation with a system prompt, two turns and a tool call, for the probe. */
    static ObjectNode sampleChat() {
        ObjectMapper json = new ObjectMapper();
        ObjectNode body = json.createObjectNode();
        ArrayNode m = body.putArray("messages");
        m.addObject().put("role", "system").put("content", "You are a helpful assistant.");
        m.addObject().put("role", "user").put("content", "Hello! Can you help me with code?\n  def f(): pass");
        m.addObject().put("role", "assistant").put("content", " Sure. Here it is:\n\n```python\nprint('hi')\n```");
        m.addObject().put("role", "user").put("content", "Thanks 😀 — and in 日本語?");
        return body;
    }
}
