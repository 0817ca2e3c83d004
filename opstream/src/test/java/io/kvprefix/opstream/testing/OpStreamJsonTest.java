package io.kvprefix.opstream.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.testing.TestScale;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link OpStreamJson} and {@link OpStreamGenerator} checked against a small strict reader of
 * docs/SPEC.md section 5 written here ({@link Reader}): every rendered variation of every generated op
 * reads back as the same op, every malformed line is rejected, output is deterministic per seed, and
 * the generator produces the variety it promises.
 */
class OpStreamJsonTest {

    private static final IndexConfig CONFIG = IndexConfig.defaults();

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
            for (StreamOp op : new OpStreamGenerator(seed + s, o).generate()) {
                StreamOp expected = normalize(op);
                assertEquals(expected, Reader.read(OpStreamJson.canonical(op)), () -> "canonical " + op);
                for (int v = 0; v < 3; v++) {
                    String line = OpStreamJson.render(op, rnd);
                    assertFalse(line.contains("\n"), line);
                    assertEquals(expected, Reader.read(line), () -> TestScale.replay(seed) + ": " + line);
                    checked++;
                }
            }
        }
        assertTrue(checked > 10_000, "checked " + checked);
    }

    @Test
    void canonicalFormIsPlain() {
        StreamOp op = new StreamOp.Event(
                KvEvent.Stored.root(Worker.of(-1L, -1), new long[] {-5}, new long[] {Long.MIN_VALUE}));
        assertEquals(
                "{\"op\":\"stored\",\"worker\":18446744073709551615,\"dp_rank\":4294967295,\"parent_hash\":null,"
                        + "\"blocks\":[{\"block_hash\":18446744073709551611,\"tokens_hash\":9223372036854775808}]}",
                OpStreamJson.canonical(op));
        assertEquals(
                "{\"op\":\"match\",\"token_ids\":[1,4294967295],\"block_size\":2,\"lora_name\":\"a\\\"b\"}",
                OpStreamJson.canonical(new StreamOp.MatchTokens(new int[] {1, -1}, 2, "a\"b", "")));
        assertEquals(
                "{\"op\":\"remove_worker\",\"worker\":9223372036854775808}",
                OpStreamJson.canonical(new StreamOp.Event(new KvEvent.RemoveWorker(Long.MIN_VALUE))));
    }

    @Test
    void renderingIsDeterministicPerRandomAndVaries() {
        List<StreamOp> ops =
                new OpStreamGenerator(42, OpStreamGenerator.Options.defaults().ops(300)).generate();
        List<StreamOp> again =
                new OpStreamGenerator(42, OpStreamGenerator.Options.defaults().ops(300)).generate();
        assertEquals(ops, again, "same seed, same stream");
        assertNotEquals(
                ops,
                new OpStreamGenerator(43, OpStreamGenerator.Options.defaults().ops(300)).generate());
        Random a = new Random(7);
        Random b = new Random(7);
        Set<String> variants = new HashSet<>();
        for (StreamOp op : ops) {
            String line = OpStreamJson.render(op, a);
            assertEquals(line, OpStreamJson.render(op, b));
            variants.add(line);
            variants.add(OpStreamJson.canonical(op));
        }
        assertTrue(variants.size() > ops.size() * 3 / 2, "renderings should differ from the canonical form");
    }

    @Test
    void everyCatalogueLineIsRejected() {
        List<StreamOp.Malformed> catalogue = OpStreamJson.malformedCatalogue();
        assertTrue(catalogue.size() >= 100, "catalogue size " + catalogue.size());
        for (StreamOp.Malformed m : catalogue) {
            assertFalse(m.why().isBlank());
            assertThrows(Reader.Invalid.class, () -> Reader.read(m.jsonLine()), () -> m.why() + ": " + m.jsonLine());
        }
        long seed = TestScale.seed();
        System.out.println("everyCatalogueLineIsRejected: " + TestScale.replay(seed));
        Random rnd = new Random(seed);
        for (int i = 0; i < 3000; i++) {
            StreamOp.Malformed m = OpStreamJson.randomMalformed(rnd);
            assertThrows(
                    Reader.Invalid.class,
                    () -> Reader.read(m.jsonLine()),
                    () -> TestScale.replay(seed) + ": " + m.why() + ": " + m.jsonLine());
        }
    }

    @Test
    void catalogueCoversEverySection5Case() {
        String whys = String.join(
                "\n",
                OpStreamJson.malformedCatalogue().stream()
                        .map(StreamOp.Malformed::why)
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
        for (OpStreamJson.MalformedBytes m : OpStreamJson.invalidUtf8Lines()) {
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
        List<StreamOp> ops = List.of(
                new StreamOp.Event(KvEvent.Stored.root(w1, new long[] {101, 102, 103}, new long[] {a, b, c})),
                new StreamOp.MatchHashes(new long[] {a, b, c}),
                new StreamOp.MatchHashes(new long[] {a, b, x}),
                new StreamOp.MatchHashes(new long[] {b}),
                new StreamOp.MatchHashes(new long[0]),
                new StreamOp.Malformed("{", "unterminated"));
        try (OracleIndex oracle = new OracleIndex(CONFIG)) {
            assertEquals(
                    List.of(
                            "{\"status\":\"ok\"}",
                            "{\"scores\":[[1,0,3]]}",
                            "{\"scores\":[[1,0,2]]}",
                            "{\"scores\":[]}",
                            "{\"scores\":[]}",
                            "{\"status\":\"invalid_input\"}"),
                    OpStreamJson.expectedOutput(ops, oracle));
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
        List<StreamOp> ops = new ArrayList<>();
        for (int g = 0; g < 6; g++) {
            ops.addAll(new OpStreamGenerator(seed + g, o).generate());
        }
        Set<String> seen = new HashSet<>();
        for (StreamOp op : ops) {
            switch (op) {
                case StreamOp.Malformed m -> seen.add("malformed");
                case StreamOp.MatchHashes m -> seen.add(m.localHashes().length == 0 ? "empty match" : "match hashes");
                case StreamOp.MatchTokens m -> {
                    seen.add("match tokens");
                    seen.add("block size " + m.blockSize());
                    if (m.tokens().length % m.blockSize() != 0) {
                        seen.add("partial tail");
                    }
                }
                case StreamOp.Event(KvEvent.Stored s) -> {
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
                case StreamOp.Event(KvEvent.StoredTokens t) -> {
                    seen.add("stored tokens");
                    if (t.loraName() != null && !t.loraName().isEmpty()) {
                        seen.add("lora");
                    }
                }
                case StreamOp.Event(KvEvent.Removed r) ->
                    seen.add(r.blockHashes().length == 0 ? "empty removed" : "removed");
                case StreamOp.Event(KvEvent.Cleared c) -> seen.add("cleared");
                case StreamOp.Event(KvEvent.RemoveWorker rw) -> seen.add("remove_worker");
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
                "removed",
                "empty removed",
                "cleared",
                "remove_worker")) {
            assertTrue(
                    seen.contains(want), "never generated: " + want + " (saw " + seen + "), " + TestScale.replay(seed));
        }
    }

    /** The op with empty salts written as null (empty and absent mean the same). */
    private static StreamOp normalize(StreamOp op) {
        return switch (op) {
            case StreamOp.Event(KvEvent.StoredTokens t) ->
                new StreamOp.Event(new KvEvent.StoredTokens(
                        t.worker(),
                        t.parentHash(),
                        t.tokenIds(),
                        t.blockSize(),
                        t.blockHashes(),
                        blank(t.loraName()),
                        blank(t.cacheNamespace())));
            case StreamOp.MatchTokens m ->
                new StreamOp.MatchTokens(m.tokens(), m.blockSize(), blank(m.lora()), blank(m.namespace()));
            default -> op;
        };
    }

    private static String blank(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /**
     * A strict reader of docs/SPEC.md section 5 input lines, written from the contract for this test only:
     * an RFC 8259 parser (no extensions) and the section's validation rules. Not the replay command's
     * reader, a second opinion on the lines this package writes.
     */
    static final class Reader {
        /** A line the contract calls malformed. */
        static final class Invalid extends RuntimeException {
            private static final long serialVersionUID = 1L;

            Invalid(String why) {
                super(why);
            }
        }

        /** A JSON number, kept as text. */
        record Num(String text) {
            boolean integer() {
                return text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
            }
        }

        private static final Object NULL = new Object() {
            @Override
            public String toString() {
                return "null";
            }
        };

        private final String s;
        private int i;

        private Reader(String s) {
            this.s = s;
        }

        static StreamOp read(String line) {
            Reader r = new Reader(line);
            r.ws();
            if (r.i >= line.length() || line.charAt(r.i) != '{') {
                throw new Invalid("not an object");
            }
            Object v = r.value();
            r.ws();
            if (r.i != line.length()) {
                throw new Invalid("trailing data");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> o = (Map<String, Object>) v;
            return decode(o);
        }

        // ---------------------------------------------------------------- RFC 8259

        private void ws() {
            while (i < s.length()
                    && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\n' || s.charAt(i) == '\r')) {
                i++;
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw new Invalid("unexpected end");
            }
            return s.charAt(i);
        }

        private void expect(char c) {
            if (peek() != c) {
                throw new Invalid("expected '" + c + "' at " + i);
            }
            i++;
        }

        private Object value() {
            ws();
            char c = peek();
            Object v;
            if (c == '{') {
                v = object();
            } else if (c == '[') {
                v = array();
            } else if (c == '"') {
                v = string();
            } else if (c == '-' || c >= '0' && c <= '9') {
                v = number();
            } else if (s.startsWith("true", i)) {
                i += 4;
                v = Boolean.TRUE;
            } else if (s.startsWith("false", i)) {
                i += 5;
                v = Boolean.FALSE;
            } else if (s.startsWith("null", i)) {
                i += 4;
                v = NULL;
            } else {
                throw new Invalid("unexpected '" + c + "' at " + i);
            }
            ws();
            return v;
        }

        private Map<String, Object> object() {
            expect('{');
            Map<String, Object> o = new LinkedHashMap<>();
            ws();
            if (peek() == '}') {
                i++;
                return o;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                Object v = value();
                if (o.put(k, v) != null) {
                    throw new Invalid("duplicate key " + k);
                }
                if (peek() == ',') {
                    i++;
                    continue;
                }
                expect('}');
                return o;
            }
        }

        private List<Object> array() {
            expect('[');
            List<Object> a = new ArrayList<>();
            ws();
            if (peek() == ']') {
                i++;
                return a;
            }
            while (true) {
                a.add(value());
                if (peek() == ',') {
                    i++;
                    continue;
                }
                expect(']');
                return a;
            }
        }

        private String string() {
            expect('"');
            StringBuilder sb = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') {
                    return sb.toString();
                }
                if (c < 0x20) {
                    throw new Invalid("raw control character in a string");
                }
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char e = peek();
                i++;
                switch (e) {
                    case '"', '\\', '/' -> sb.append(e);
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw new Invalid("short \\u escape");
                        }
                        try {
                            sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw new Invalid("bad \\u escape");
                        }
                        i += 4;
                    }
                    default -> throw new Invalid("bad escape \\" + e);
                }
            }
        }

        private Num number() {
            int start = i;
            if (peek() == '-') {
                i++;
            }
            if (peek() == '0') {
                i++;
            } else if (peek() >= '1' && peek() <= '9') {
                while (i < s.length() && Character.isDigit(s.charAt(i))) {
                    i++;
                }
            } else {
                throw new Invalid("bad number");
            }
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                int d = i;
                while (i < s.length() && Character.isDigit(s.charAt(i))) {
                    i++;
                }
                if (d == i) {
                    throw new Invalid("empty fraction");
                }
            }
            if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                i++;
                if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                    i++;
                }
                int d = i;
                while (i < s.length() && Character.isDigit(s.charAt(i))) {
                    i++;
                }
                if (d == i) {
                    throw new Invalid("empty exponent");
                }
            }
            return new Num(s.substring(start, i));
        }

        // ---------------------------------------------------------------- section 5

        private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
        private static final BigInteger I64_MIN = BigInteger.valueOf(Long.MIN_VALUE);
        private static final BigInteger U32_MAX = BigInteger.valueOf(0xFFFF_FFFFL);

        private static StreamOp decode(Map<String, Object> o) {
            Object op = o.get("op");
            if (!(op instanceof String name)) {
                throw new Invalid("op missing or not a string");
            }
            return switch (name) {
                case "stored" -> {
                    Worker w = worker(o);
                    OptionalLong parent = optionalHash(o, "parent_hash");
                    boolean hasBlocks = o.containsKey("blocks");
                    boolean hasTokens = o.containsKey("token_ids");
                    if (hasBlocks == hasTokens) {
                        throw new Invalid("stored needs exactly one of blocks and token_ids");
                    }
                    String lora = optionalString(o, "lora_name");
                    String ns = optionalString(o, "cache_namespace");
                    if (hasBlocks) {
                        List<Object> blocks = array(o.get("blocks"), "blocks");
                        long[] e = new long[blocks.size()];
                        long[] l = new long[blocks.size()];
                        for (int k = 0; k < blocks.size(); k++) {
                            if (!(blocks.get(k) instanceof Map<?, ?> b)) {
                                throw new Invalid("a block is not an object");
                            }
                            e[k] = hash(b.get("block_hash"), "block_hash");
                            l[k] = hash(b.get("tokens_hash"), "tokens_hash");
                        }
                        yield new StreamOp.Event(new KvEvent.Stored(w, parent, e, l));
                    }
                    int[] tokens = tokens(o.get("token_ids"));
                    int bs = blockSize(o.get("block_size"));
                    List<Object> hashes = array(o.get("block_hashes"), "block_hashes");
                    long[] e = new long[hashes.size()];
                    for (int k = 0; k < e.length; k++) {
                        e[k] = hash(hashes.get(k), "block_hashes");
                    }
                    if (Integer.toUnsignedLong(tokens.length) / Integer.toUnsignedLong(bs) != e.length) {
                        throw new Invalid("engine hash count differs from the number of full blocks");
                    }
                    yield new StreamOp.Event(new KvEvent.StoredTokens(w, parent, tokens, bs, e, lora, ns));
                }
                case "removed" -> {
                    Worker w = worker(o);
                    List<Object> hashes = array(o.get("block_hashes"), "block_hashes");
                    long[] e = new long[hashes.size()];
                    for (int k = 0; k < e.length; k++) {
                        e[k] = hash(hashes.get(k), "block_hashes");
                    }
                    yield new StreamOp.Event(new KvEvent.Removed(w, e));
                }
                case "cleared" -> new StreamOp.Event(new KvEvent.Cleared(worker(o)));
                case "remove_worker" ->
                    new StreamOp.Event(
                            new KvEvent.RemoveWorker(integer(o.get("worker"), BigInteger.ZERO, U64_MAX, "worker")
                                    .longValue()));
                case "match" -> {
                    boolean hasHashes = o.containsKey("local_hashes");
                    boolean hasTokens = o.containsKey("token_ids");
                    if (hasHashes == hasTokens) {
                        throw new Invalid("match needs exactly one of local_hashes and token_ids");
                    }
                    String lora = optionalString(o, "lora_name");
                    String ns = optionalString(o, "cache_namespace");
                    if (hasHashes) {
                        List<Object> hashes = array(o.get("local_hashes"), "local_hashes");
                        long[] q = new long[hashes.size()];
                        for (int k = 0; k < q.length; k++) {
                            q[k] = hash(hashes.get(k), "local_hashes");
                        }
                        yield new StreamOp.MatchHashes(q);
                    }
                    yield new StreamOp.MatchTokens(
                            tokens(o.get("token_ids")), blockSize(o.get("block_size")), lora, ns);
                }
                default -> throw new Invalid("unknown op " + name);
            };
        }

        private static Worker worker(Map<String, Object> o) {
            long id =
                    integer(o.get("worker"), BigInteger.ZERO, U64_MAX, "worker").longValue();
            int rank = 0;
            if (o.containsKey("dp_rank")) {
                rank = integer(o.get("dp_rank"), BigInteger.ZERO, U32_MAX, "dp_rank")
                        .intValue();
            }
            return Worker.of(id, rank);
        }

        private static BigInteger integer(Object v, BigInteger min, BigInteger max, String what) {
            if (!(v instanceof Num n) || !n.integer()) {
                throw new Invalid(what + " is not an integer: " + v);
            }
            BigInteger b = new BigInteger(n.text());
            if (b.compareTo(min) < 0 || b.compareTo(max) > 0) {
                throw new Invalid(what + " out of range: " + b);
            }
            return b;
        }

        private static long hash(Object v, String what) {
            return integer(v, I64_MIN, U64_MAX, what).longValue(); // the low 64 bits: two's complement
        }

        private static OptionalLong optionalHash(Map<String, Object> o, String key) {
            Object v = o.get(key);
            return v == null || v == NULL ? OptionalLong.empty() : OptionalLong.of(hash(v, key));
        }

        private static String optionalString(Map<String, Object> o, String key) {
            Object v = o.get(key);
            if (v == null || v == NULL) {
                return null;
            }
            if (!(v instanceof String str)) {
                throw new Invalid(key + " is not a string");
            }
            return str.isEmpty() ? null : str;
        }

        @SuppressWarnings("unchecked")
        private static List<Object> array(Object v, String what) {
            if (!(v instanceof List<?> l)) {
                throw new Invalid(what + " is not an array");
            }
            return (List<Object>) l;
        }

        private static int[] tokens(Object v) {
            List<Object> a = array(v, "token_ids");
            int[] t = new int[a.size()];
            for (int k = 0; k < t.length; k++) {
                t[k] = integer(a.get(k), BigInteger.ZERO, U32_MAX, "token").intValue();
            }
            return t;
        }

        private static int blockSize(Object v) {
            int bs = integer(v, BigInteger.ONE, U32_MAX, "block_size").intValue();
            if (bs < 1) {
                throw new Invalid("block_size beyond what this reader supports: " + Integer.toUnsignedString(bs));
            }
            return bs;
        }
    }
}
