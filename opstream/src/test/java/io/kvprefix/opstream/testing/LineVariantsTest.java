package io.kvprefix.opstream.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamParser;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.testing.TestScale;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link LineVariants}, {@link OpStreamGenerator} and {@link ReferenceOutput} checked against the
 * format's parser: the plain line ({@link OpStreamWriter#line}) and every rendered spelling of every
 * generated op read back as the same op, every malformed line is rejected, output is deterministic
 * per seed, the generator produces the variety it promises, and the reference output of a worked
 * example is the one docs/SPEC.md section 7 gives.
 */
class LineVariantsTest {

    private static final IndexConfig CONFIG = IndexConfig.defaults();
    private static final OpStreamParser PARSER = new OpStreamParser();

    @Test
    void everyRenderedVariationReadsBackAsTheSameOp() {
        long seed = TestScale.seed();
        System.out.println("everyRenderedVariationReadsBackAsTheSameOp: " + TestScale.replay(seed));
        Random rnd = new Random(seed);
        int checked = 0;
        for (int s = 0; s < 40; s++) {
            OpStreamGenerator.Options o = OpStreamGenerator.Options.defaults()
                    .ops(150)
                    .maxChain(20)
                    .tokenRate(0.6)
                    .maxRanks(5)
                    .config(CONFIG);
            for (Op op : new OpStreamGenerator(seed + s, o).generate()) {
                Op expected = normalize(op);
                assertEquals(expected, read(OpStreamWriter.line(op)), () -> "plain " + op);
                for (int v = 0; v < 3; v++) {
                    String line = LineVariants.render(op, rnd);
                    assertFalse(line.contains("\n"), line);
                    assertEquals(expected, read(line), () -> TestScale.replay(seed) + ": " + line);
                    checked++;
                }
            }
        }
        assertTrue(checked > 10_000, "checked " + checked);
    }

    @Test
    void renderingIsDeterministicPerRandomAndVaries() {
        List<Op> ops =
                new OpStreamGenerator(42, OpStreamGenerator.Options.defaults().ops(300)).generate();
        List<Op> again =
                new OpStreamGenerator(42, OpStreamGenerator.Options.defaults().ops(300)).generate();
        assertEquals(ops, again, "same seed, same stream");
        assertNotEquals(
                ops,
                new OpStreamGenerator(43, OpStreamGenerator.Options.defaults().ops(300)).generate());
        Random a = new Random(7);
        Random b = new Random(7);
        Set<String> variants = new HashSet<>();
        for (Op op : ops) {
            String line = LineVariants.render(op, a);
            assertEquals(line, LineVariants.render(op, b));
            variants.add(line);
            variants.add(OpStreamWriter.line(op));
        }
        assertTrue(variants.size() > ops.size() * 3 / 2, "renderings should differ from the plain form");
    }

    @Test
    void everyCatalogueLineIsRejected() {
        List<Op.Invalid> catalogue = LineVariants.malformedCatalogue();
        assertTrue(catalogue.size() >= 100, "catalogue size " + catalogue.size());
        for (Op.Invalid m : catalogue) {
            assertFalse(m.reason().isBlank());
            assertInstanceOf(Op.Invalid.class, read(m.line()), () -> m.reason() + ": " + m.line());
        }
        long seed = TestScale.seed();
        System.out.println("everyCatalogueLineIsRejected: " + TestScale.replay(seed));
        Random rnd = new Random(seed);
        for (int i = 0; i < 3000; i++) {
            Op.Invalid m = LineVariants.randomMalformed(rnd);
            assertInstanceOf(
                    Op.Invalid.class,
                    read(m.line()),
                    () -> TestScale.replay(seed) + ": " + m.reason() + ": " + m.line());
        }
    }

    @Test
    void catalogueCoversEverySection5Case() {
        String whys = String.join(
                "\n",
                LineVariants.malformedCatalogue().stream()
                        .map(Op.Invalid::reason)
                        .toList());
        for (String needle : List.of(
                "blank line",
                "trailing data",
                "single quote",
                "unquoted keys",
                "trailing comma",
                "NaN",
                "Infinity",
                "comment",
                "top-level array",
                "top-level number",
                "top-level string",
                "top-level null",
                "unknown op",
                "case-sensitive",
                "worker missing",
                "worker null",
                "dp_rank null",
                "lora_name is a number",
                "not an integer",
                "1e3",
                "is a string",
                "is a boolean",
                "2^64",
                "below -2^63",
                "negative worker",
                "negative dp_rank",
                "dp_rank 2^32",
                "negative token",
                "token of 2^32",
                "block_size 0",
                "block_size 2^32",
                "both blocks and token_ids",
                "both local_hashes and token_ids",
                "one full block, but no engine hash")) {
            assertTrue(whys.contains(needle), "no catalogue entry for: " + needle);
        }
    }

    @Test
    void invalidUtf8LinesAreNotUtf8() {
        for (LineVariants.MalformedBytes m : LineVariants.invalidUtf8Lines()) {
            assertInstanceOf(Op.Invalid.class, PARSER.parse(m.line()), m.why());
            assertThrows(
                    CharacterCodingException.class,
                    () -> StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(m.line())),
                    m.why());
            for (byte b : m.line()) {
                assertNotEquals('\n', b);
            }
        }
    }

    @Test
    void expectedOutputOfExample1() {
        long a = 11, b = 12, c = 13, x = 99;
        Worker w1 = Worker.of(1);
        List<Op> ops = List.of(
                new Op.Event(KvEvent.Stored.root(w1, new long[] {101, 102, 103}, new long[] {a, b, c})),
                new Op.HashMatch(new long[] {a, b, c}),
                new Op.HashMatch(new long[] {a, b, x}),
                new Op.HashMatch(new long[] {b}),
                new Op.HashMatch(new long[0]),
                new Op.Invalid("unterminated", "{"));
        try (OracleIndex oracle = new OracleIndex(CONFIG)) {
            assertEquals(
                    List.of(
                            "{\"status\":\"ok\"}",
                            "{\"scores\":[[1,0,3]]}",
                            "{\"scores\":[[1,0,2]]}",
                            "{\"scores\":[]}",
                            "{\"scores\":[]}",
                            "{\"status\":\"invalid_input\"}"),
                    ReferenceOutput.lines(ops, oracle));
        }
    }

    @Test
    void generatorProducesTheVarietyItPromises() {
        OpStreamGenerator.Options o = OpStreamGenerator.Options.defaults()
                .ops(3000)
                .workerIds(20)
                .maxRanks(3)
                .malformedRate(0.05)
                .longChainRate(0.01)
                .maxLongChain(400)
                .slots(8);
        // A single generator draws its flavors (block sizes, salts) once: look at a few.
        long seed = TestScale.seed();
        System.out.println("generatorProducesTheVarietyItPromises: " + TestScale.replay(seed));
        List<Op> ops = new ArrayList<>();
        for (int g = 0; g < 6; g++) {
            ops.addAll(new OpStreamGenerator(seed + g, o).generate());
        }
        Set<String> seen = new HashSet<>();
        for (Op op : ops) {
            switch (op) {
                case Op.Invalid m -> seen.add("malformed");
                case Op.Explain x -> seen.add("explain");
                case Op.HashMatch m -> seen.add(m.localHashes().length == 0 ? "empty match" : "match hashes");
                case Op.TokenMatch m -> {
                    seen.add("match tokens");
                    seen.add("block size " + m.blockSize());
                    if (m.tokenIds().length % m.blockSize() != 0) {
                        seen.add("partial tail");
                    }
                }
                case Op.Event(KvEvent.Stored s) -> {
                    seen.add(s.parentHash().isPresent() ? "stored with parent" : "stored root");
                    if (s.size() >= 100) {
                        seen.add("long chain");
                    }
                    if (s.size() == 0) {
                        seen.add("empty store");
                    }
                    for (long e : s.blockHashes()) {
                        if (e < 0) {
                            seen.add("engine hash >= 2^63");
                        }
                    }
                    if (s.worker().workerId() < 0) {
                        seen.add("worker id >= 2^63");
                    }
                    if (s.worker().dpRank() == -1) {
                        seen.add("dp rank 2^32-1");
                    }
                }
                case Op.Event(KvEvent.StoredTokens t) -> {
                    seen.add("stored tokens");
                    if (t.loraName() != null && !t.loraName().isEmpty()) {
                        seen.add("lora");
                    }
                    if (t.hasMultimodal()) {
                        seen.add("multimodal");
                    }
                    if (t.medium() != Medium.GPU) {
                        seen.add("lower-tier store");
                    }
                }
                case Op.Event(KvEvent.Copied c) -> seen.add("copied");
                case Op.Event(KvEvent.Removed r) -> {
                    seen.add(r.blockHashes().length == 0 ? "empty removed" : "removed");
                    if (r.medium() != Medium.GPU) {
                        seen.add("lower-tier removed");
                    }
                }
                case Op.Event(KvEvent.Cleared c) -> seen.add("cleared");
                case Op.Event(KvEvent.RemoveWorker rw) -> seen.add("remove_worker");
            }
        }
        for (String want : List.of(
                "malformed",
                "empty match",
                "match hashes",
                "match tokens",
                "partial tail",
                "stored with parent",
                "stored root",
                "long chain",
                "empty store",
                "engine hash >= 2^63",
                "worker id >= 2^63",
                "dp rank 2^32-1",
                "stored tokens",
                "lora",
                "multimodal",
                "lower-tier store",
                "copied",
                "lower-tier removed",
                "removed",
                "empty removed",
                "cleared",
                "remove_worker")) {
            assertTrue(
                    seen.contains(want), "never generated: " + want + " (saw " + seen + "), " + TestScale.replay(seed));
        }
    }

    /** The op with empty salts written as null (empty and absent mean the same). */
    private static Op normalize(Op op) {
        return switch (op) {
            case Op.Event(KvEvent.StoredTokens t) ->
                new Op.Event(new KvEvent.StoredTokens(
                        t.worker(),
                        t.parentHash(),
                        t.tokenIds(),
                        t.blockSize(),
                        t.blockHashes(),
                        blank(t.loraName()),
                        blank(t.cacheNamespace()),
                        t.mmHashes(),
                        t.medium()));
            case Op.TokenMatch m ->
                new Op.TokenMatch(m.tokenIds(), m.blockSize(), blank(m.loraName()), blank(m.cacheNamespace()), m.mm());
            default -> op;
        };
    }

    private static String blank(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static Op read(String line) {
        return PARSER.parse(line);
    }
}
