package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link OpStreamParser}: every validation case of docs/SPEC.md section 5, the valid edge cases, and
 * robustness against arbitrary bytes. Expected values are written out by hand (2^64-1 is -1L, and so on).
 */
class OpStreamParserTest {
    private final OpStreamParser parser = new OpStreamParser();

    private static final long[] NONE = {};

    private Op parse(String line) {
        return parser.parse(line);
    }

    private KvEvent event(String line) {
        Op op = parse(line);
        if (!(op instanceof Op.Event e)) {
            throw new AssertionError("expected an event from " + line + ", got " + op);
        }
        return e.event();
    }

    private void assertInvalid(String line, String reasonFragment) {
        assertInvalid(line.getBytes(StandardCharsets.UTF_8), reasonFragment, line);
    }

    private void assertInvalid(byte[] line, String reasonFragment, String shown) {
        Op op = parser.parse(line);
        if (!(op instanceof Op.Invalid inv)) {
            throw new AssertionError("expected invalid_input for " + shown + ", got " + op);
        }
        assertTrue(
                inv.reason().contains(reasonFragment),
                () -> "reason for " + shown + " should mention '" + reasonFragment + "': " + inv.reason());
        assertFalse(inv.reason().contains("\n"), "one-line reason");
    }

    // ------------------------------------------------------------------ valid lines

    @Test
    void storedHashForm() {
        assertEquals(
                new KvEvent.Stored(new Worker(1, 2), OptionalLong.of(100), new long[] {101, 102}, new long[] {11, 22}),
                event(
                        "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":2,\"parent_hash\":100,"
                                + "\"blocks\":[{\"block_hash\":101,\"tokens_hash\":11},{\"block_hash\":102,\"tokens_hash\":22}]}"));
    }

    @Test
    void optionalFieldsLeftOutOrNull() {
        KvEvent.Stored expected = new KvEvent.Stored(new Worker(7, 0), OptionalLong.empty(), NONE, NONE);
        assertEquals(expected, event("{\"op\":\"stored\",\"worker\":7,\"blocks\":[]}"));
        assertEquals(expected, event("{\"op\":\"stored\",\"worker\":7,\"parent_hash\":null,\"blocks\":[]}"));
        assertEquals(
                new KvEvent.StoredTokens(
                        new Worker(7, 0), OptionalLong.empty(), new int[] {1, 2}, 2, new long[] {9}, null, null),
                event("{\"op\":\"stored\",\"worker\":7,\"token_ids\":[1,2],\"block_size\":2,\"block_hashes\":[9],"
                        + "\"lora_name\":null,\"cache_namespace\":null}"));
    }

    @Test
    void keyOrderAndWhitespaceAreFree() {
        assertEquals(
                new KvEvent.Stored(new Worker(7, 3), OptionalLong.of(5), new long[] {1}, new long[] {2}),
                event(" \t{ \"blocks\" : [ { \"tokens_hash\" :2 , \"block_hash\": 1 } ] ,\r \"parent_hash\":5,"
                        + "\"dp_rank\" :3, \"worker\" : 7 , \"op\" : \"stored\" }\t \r"));
    }

    @Test
    void tokenFormStoredWithSalt() {
        int[] tokens = IntStream.rangeClosed(1, 13).toArray();
        assertEquals(
                new KvEvent.StoredTokens(
                        new Worker(5, 0),
                        OptionalLong.empty(),
                        tokens,
                        4,
                        new long[] {1, 2, 3},
                        "adapter-a",
                        "tenant-a"),
                event("{\"op\":\"stored\",\"worker\":5,\"token_ids\":[1,2,3,4,5,6,7,8,9,10,11,12,13],\"block_size\":4,"
                        + "\"block_hashes\":[1,2,3],\"lora_name\":\"adapter-a\",\"cache_namespace\":\"tenant-a\"}"));
    }

    @Test
    void otherEvents() {
        assertEquals(
                new KvEvent.Removed(new Worker(1, 0), new long[] {5, 5}),
                event("{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[5,5]}"));
        assertEquals(
                new KvEvent.Removed(new Worker(1, 4), NONE),
                event("{\"op\":\"removed\",\"worker\":1,\"dp_rank\":4,\"block_hashes\":[]}"));
        assertEquals(new KvEvent.Cleared(new Worker(2, 1)), event("{\"op\":\"cleared\",\"worker\":2,\"dp_rank\":1}"));
        assertEquals(new KvEvent.RemoveWorker(3), event("{\"op\":\"remove_worker\",\"worker\":3}"));
    }

    @Test
    void matches() {
        assertEquals(new Op.HashMatch(new long[] {11, 22}), parse("{\"op\":\"match\",\"local_hashes\":[11,22]}"));
        assertEquals(new Op.HashMatch(NONE), parse("{\"op\":\"match\",\"local_hashes\":[]}"));
        assertEquals(
                new Op.TokenMatch(new int[] {1, 2, 3}, 2, null, null),
                parse("{\"op\":\"match\",\"token_ids\":[1,2,3],\"block_size\":2}"));
        assertEquals(
                new Op.TokenMatch(new int[0], 16, "l", "ns"),
                parse(
                        "{\"op\":\"match\",\"token_ids\":[],\"block_size\":16,\"lora_name\":\"l\",\"cache_namespace\":\"ns\"}"));
        // an empty salt is the same as none (docs/SPEC.md section 2.1)
        assertEquals(
                new Op.TokenMatch(new int[] {1}, 1, null, null),
                parse(
                        "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":\"\",\"cache_namespace\":\"\"}"));
    }

    @Test
    void fieldsTheOpDoesNotUseAreIgnored() {
        assertEquals(
                new Op.HashMatch(new long[] {1}),
                parse("{\"op\":\"match\",\"local_hashes\":[1],\"dp_rank\":-1,\"worker\":\"x\",\"blocks\":7}"));
        assertEquals(new KvEvent.RemoveWorker(3), event("{\"op\":\"remove_worker\",\"worker\":3,\"dp_rank\":\"bad\"}"));
        assertEquals(
                new KvEvent.RemoveWorker(3), event("{\"op\":\"remove_worker\",\"worker\":3,\"dp_rank\":4294967296}"));
        assertEquals(
                new KvEvent.Stored(new Worker(1, 0), OptionalLong.empty(), NONE, NONE),
                event(
                        "{\"op\":\"stored\",\"worker\":1,\"blocks\":[],\"lora_name\":5,\"block_size\":0,\"block_hashes\":\"x\"}"));
        assertEquals(
                new KvEvent.Cleared(new Worker(1, 0)),
                event("{\"op\":\"cleared\",\"worker\":1,\"block_hashes\":[null]}"));
    }

    @Test
    void unknownFieldsAreIgnoredWhateverTheyHold() {
        assertEquals(
                new KvEvent.Cleared(new Worker(1, 0)),
                event("{\"op\":\"cleared\",\"meta\":{\"a\":[1,{\"b\":null},[]],\"c\":\"x\\\"y\\u00e9\",\"d\":{}},"
                        + "\"n\":-1.5e+3,\"t\":true,\"f\":false,\"z\":null,\"worker\":1,\"s\":\"\u00fcn\u00ef\"}"));
        // inside a block, too; and a repeated unknown name is just ignored
        assertEquals(
                new KvEvent.Stored(new Worker(1, 0), OptionalLong.empty(), new long[] {1}, new long[] {2}),
                event("{\"op\":\"stored\",\"worker\":1,\"x\":1,\"x\":2,"
                        + "\"blocks\":[{\"block_hash\":1,\"meta\":[{\"k\":[]}],\"tokens_hash\":2}]}"));
        // an "op" inside an ignored object is not the line's op
        assertEquals(
                new Op.HashMatch(new long[] {11}),
                parse("{\"extra\":{\"op\":\"removed\"},\"op\":\"match\",\"local_hashes\":[11]}"));
    }

    @Test
    void nestingUpToTheLimitIsFine() {
        int depth = OpStreamParser.MAX_NESTING;
        String ok = "{\"op\":\"cleared\",\"worker\":1,\"x\":" + "[".repeat(depth) + "]".repeat(depth) + "}";
        assertEquals(new KvEvent.Cleared(new Worker(1, 0)), event(ok));
        String deeper =
                "{\"op\":\"cleared\",\"worker\":1,\"x\":" + "[{\"a\":".repeat(depth) + "1" + "}]".repeat(depth) + "}";
        assertInvalid(deeper, "nest deeper than " + depth);
        String veryDeep =
                "{\"op\":\"cleared\",\"worker\":1,\"x\":" + "[".repeat(1_000_000) + "]".repeat(1_000_000) + "}";
        assertInvalid(veryDeep, "nest deeper");
    }

    @Test
    void unsignedAndNegativeNumbers() {
        assertEquals(
                new Op.HashMatch(new long[] {-1L, -1L, Long.MIN_VALUE, Long.MIN_VALUE, -5L, -5L, 0, 0, Long.MAX_VALUE}),
                parse("{\"op\":\"match\",\"local_hashes\":[18446744073709551615,-1,9223372036854775808,"
                        + "-9223372036854775808,18446744073709551611,-5,0,-0,9223372036854775807]}"));
        assertEquals(
                new KvEvent.Cleared(new Worker(-1L, -1)),
                event("{\"op\":\"cleared\",\"worker\":18446744073709551615,\"dp_rank\":4294967295}"));
        // -0 is a JSON integer (RFC 8259 "int"), value 0: accepted also where negatives are not
        assertEquals(new KvEvent.Cleared(new Worker(0, 0)), event("{\"op\":\"cleared\",\"worker\":-0,\"dp_rank\":-0}"));
        assertEquals(
                new Op.TokenMatch(new int[] {-1, 0, Integer.MIN_VALUE, 0}, 1, null, null),
                parse("{\"op\":\"match\",\"token_ids\":[4294967295,0,2147483648,-0],\"block_size\":1}"));
        assertEquals(
                new KvEvent.Stored(
                        new Worker(3, 0), OptionalLong.of(-1L), new long[] {-5}, new long[] {Long.MIN_VALUE}),
                event("{\"op\":\"stored\",\"worker\":3,\"parent_hash\":-1,"
                        + "\"blocks\":[{\"block_hash\":-5,\"tokens_hash\":-9223372036854775808}]}"));
    }

    @Test
    void blockSizeAboveIntRangeYieldsZeroBlocks() {
        assertEquals(
                new Op.TokenMatch(new int[] {1, 2, 3, 4}, Integer.MAX_VALUE, null, null),
                parse("{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":4294967295}"));
        assertEquals(
                new Op.TokenMatch(new int[] {1}, Integer.MAX_VALUE, null, null),
                parse("{\"op\":\"match\",\"token_ids\":[1],\"block_size\":2147483648}"));
        assertEquals(
                new KvEvent.StoredTokens(
                        new Worker(1, 0),
                        OptionalLong.empty(),
                        new int[] {1, 2, 3, 4},
                        Integer.MAX_VALUE,
                        NONE,
                        null,
                        null),
                event(
                        "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":4294967295,\"block_hashes\":[]}"));
        assertInvalid(
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":4294967295,\"block_hashes\":[1]}",
                "make 0 full block(s), but block_hashes has 1");
        assertEquals(
                new Op.TokenMatch(new int[] {1}, Integer.MAX_VALUE, null, null),
                parse("{\"op\":\"match\",\"token_ids\":[1],\"block_size\":2147483647}"));
    }

    @Test
    void stringsAreUnescapedAndUtf8Decoded() {
        Op.TokenMatch expected = new Op.TokenMatch(new int[] {0, 1}, 2, "\u00fcn\u00ef", "\uD83D\uDE00/\"\\\t");
        assertEquals(
                expected,
                parse("{\"op\":\"match\",\"token_ids\":[0,1],\"block_size\":2,\"lora_name\":\"\u00fcn\u00ef\","
                        + "\"cache_namespace\":\"\uD83D\uDE00/\\\"\\\\\\t\"}"));
        assertEquals(
                expected,
                parse("{\"op\":\"match\",\"token_ids\":[0,1],\"block_size\":2,\"lora_name\":\"\\u00fcn\\u00EF\","
                        + "\"cache_namespace\":\"\\ud83d\\ude00\\/\\\"\\\\\\t\"}"));
        // escaped names and ops are the same names and ops
        assertEquals(
                new KvEvent.Cleared(new Worker(4, 0)), event("{\"\\u006fp\":\"cle\\u0061red\",\"w\\u006Frker\":4}"));
    }

    @Test
    void crlfLineIsValidBecauseCrIsWhitespace() {
        assertEquals(new KvEvent.Cleared(new Worker(1, 0)), event("{\"op\":\"cleared\",\r\"worker\":1}\r"));
    }

    // ------------------------------------------------------------------ invalid lines

    @Test
    void notExactlyOneObject() {
        assertInvalid("", "blank line");
        assertInvalid("  \t \r", "blank line");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1} x", "trailing data");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1}{}", "trailing data");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1},", "trailing data");
        assertInvalid("[{\"op\":\"cleared\",\"worker\":1}]", "must be a JSON object, but it starts with an array");
        assertInvalid("[]", "starts with an array");
        assertInvalid("42", "starts with a number");
        assertInvalid("-1", "starts with a number");
        assertInvalid("\"cleared\"", "starts with a string");
        assertInvalid("null", "starts with null");
        assertInvalid("true", "starts with a boolean");
        assertInvalid("false", "starts with a boolean");
        assertInvalid("x", "expected a JSON object '{', found 'x'");
        assertInvalid("nonsense", "expected a JSON object '{', found 'n'");
        assertInvalid("-x", "expected a JSON object '{', found '-'");
    }

    @Test
    void notJson() {
        assertInvalid("{'op':'cleared','worker':1}", "single quotes");
        assertInvalid("{\"op\":'cleared',\"worker\":1}", "single quotes");
        assertInvalid("{op:\"cleared\",worker:1}", "unquoted names");
        assertInvalid("{\"op\":\"cleared\",worker:1}", "unquoted names");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,}", "trailing comma");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[1,2,]}", "trailing comma");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[1, ]}", "trailing comma");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[NaN]}", "NaN and Infinity");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[Infinity]}", "NaN and Infinity");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[-Infinity]}", "-Infinity is not JSON");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":NaN}", "NaN and Infinity");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1} // note", "comments");
        assertInvalid("/* note */ {\"op\":\"cleared\",\"worker\":1}", "comments");
        assertInvalid("{\"op\":\"cleared\", /* note */ \"worker\":1}", "comments");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1 # note\n}", "comments");
        assertInvalid("{\"op\":\"cleared\",\"worker\":+1}", "leading '+'");
        assertInvalid("{\"op\":\"cleared\",\"worker\":01}", "leading zeros");
        assertInvalid("{\"op\":\"cleared\",\"worker\":-01}", "leading zeros");
        assertInvalid("{\"op\":\"cleared\",\"worker\":.5}", "start with a digit");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1.}", "'.' in a number");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1e}", "exponent");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1e+}", "exponent");
        assertInvalid("{\"op\":\"cleared\",\"worker\":-}", "'-' must be followed by a digit");
        assertInvalid("{\"op\":\"cleared\",\"worker\":0x10}", "expected ',' or '}'");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":True}", "expected a value, found 'T'");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":nul}", "invalid literal");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":nulll}", "expected ',' or '}'");
        assertInvalid("{\"op\" \"cleared\",\"worker\":1}", "':'");
        assertInvalid("{\"op\":\"cleared\" \"worker\":1}", "',' or '}'");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[1 2]}", "',' or ']'");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":[1,}]}", "expected a value");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":{\"a\" 1}}", "':'");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":{\"a\":1,}}", "trailing comma");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":{1:2}}", "a field name");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":[1]]}", "',' or '}'");
    }

    @Test
    void truncatedLines() {
        String full = "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":0,\"parent_hash\":null,"
                + "\"blocks\":[{\"block_hash\":101,\"tokens_hash\":11}],\"x\":{\"y\":[true,\"s\\u00e9\"]}}";
        assertInstanceOf(Op.Event.class, parse(full));
        for (int n = 1; n < full.length(); n++) {
            String prefix = full.substring(0, n);
            assertInstanceOf(Op.Invalid.class, parse(prefix), () -> "prefix " + prefix);
        }
        assertInvalid("{\"op\":\"cleared\",\"worker\":1", "line ends");
        assertInvalid("{\"op\":\"clea", "unterminated string");
        assertInvalid("{", "line ends");
        assertInvalid("{\"op\":\"match\",\"local_hashes\":[1,2", "line ends");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\u00", "\\u escape");
    }

    @Test
    void sliceBoundsAreRespected() {
        byte[] buf = "xx{\"op\":\"cleared\",\"worker\":12}yy".getBytes(StandardCharsets.UTF_8);
        assertEquals(new Op.Event(new KvEvent.Cleared(new Worker(12, 0))), parser.parse(buf, 2, buf.length - 4));
        // the slice ends before the closing brace: the brace after it must not be seen
        byte[] cut = "{\"op\":\"cleared\",\"worker\":1}".getBytes(StandardCharsets.UTF_8);
        assertInstanceOf(Op.Invalid.class, parser.parse(cut, 0, cut.length - 1));
        // ... nor the rest of a number, string or literal
        byte[] num = "{\"op\":\"cleared\",\"worker\":123}".getBytes(StandardCharsets.UTF_8);
        assertInstanceOf(Op.Invalid.class, parser.parse(num, 0, num.length - 3));
        byte[] str = "{\"op\":\"cleared\"}".getBytes(StandardCharsets.UTF_8);
        assertInstanceOf(Op.Invalid.class, parser.parse(str, 0, 12));
        byte[] lit = "{\"op\":\"cleared\",\"worker\":1,\"x\":null}".getBytes(StandardCharsets.UTF_8);
        assertInstanceOf(Op.Invalid.class, parser.parse(lit, 0, lit.length - 3));
    }

    @Test
    void stringProblems() {
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"a\tb\"}", "control character");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"a\u0000b\"}", "control character");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\a\"}", "invalid escape");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\x41\"}", "invalid escape");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\u12g4\"}", "4 hex digits");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\ud800\"}", "unpaired");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\ud800\\u0041\"}", "unpaired");
        assertInvalid("{\"op\":\"cleared\",\"worker\":1,\"x\":\"\\udc00\"}", "unpaired");
        assertInvalid("{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":\"\\ud83d\"}", "unpaired");
    }

    @Test
    void invalidUtf8() {
        String head = "{\"op\":\"stored\",\"worker\":1,\"blocks\":[],\"note\":\"";
        for (int[] bad : new int[][] {
            {0xFF},
            {0x80},
            {0xC0, 0xAF},
            {0xC1, 0xBF},
            {0xE0, 0x80, 0xAF},
            {0xED, 0xA0, 0x80},
            {0xF4, 0x90, 0x80, 0x80},
            {0xF5, 0x80, 0x80, 0x80},
            {0xE2, 0x82},
            {0xC3},
            {0xF0, 0x9F, 0x98}
        }) {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            line.writeBytes(head.getBytes(StandardCharsets.UTF_8));
            for (int x : bad) {
                line.write(x);
            }
            line.writeBytes("\"}".getBytes(StandardCharsets.UTF_8));
            assertInvalid(line.toByteArray(), "invalid UTF-8", head + Arrays.toString(bad));
        }
        // in a key, in the op, and outside any string
        assertInvalid(bytes("{\"op\":\"cleared\",\"worker\":1,\"k", 0xFF, "\":1}"), "invalid UTF-8", "key");
        assertInvalid(bytes("{\"op\":\"cleared", 0xC0, 0x80, "\",\"worker\":1}"), "invalid UTF-8", "op");
        assertInvalid(bytes("{\"op\":\"cleared\",\"worker\":1}", 0xFF), "invalid UTF-8", "after");
        assertInvalid(bytes("", 0xEF, 0xBB, 0xBF, "{\"op\":\"cleared\",\"worker\":1}"), "U+FEFF", "BOM");
        // valid multi-byte UTF-8 of every length is accepted
        byte[] ok = bytes(
                head, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0xF4, 0x8F, 0xBF, 0xBF, 0xEF, 0xBF, 0xBF,
                "\"}");
        assertInstanceOf(Op.Event.class, parser.parse(ok));
        // a non-ASCII character outside strings is named
        assertInvalid("{\"op\":\"cleared\",\"worker\":1}\u00e9", "found U+00E9");
    }

    private static byte[] bytes(Object... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object p : parts) {
            if (p instanceof String s) {
                out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            } else {
                out.write((Integer) p);
            }
        }
        return out.toByteArray();
    }

    @Test
    void opProblems() {
        assertInvalid("{\"worker\":1,\"blocks\":[]}", "required field \"op\" is missing");
        assertInvalid("{}", "required field \"op\" is missing");
        assertInvalid("{\"op\":null,\"worker\":1}", "\"op\" is null");
        assertInvalid("{\"op\":1,\"worker\":1}", "op must be a string, got a number");
        assertInvalid("{\"op\":[\"stored\"],\"worker\":1}", "op must be a string, got an array");
        assertInvalid("{\"op\":\"Stored\",\"worker\":1,\"blocks\":[]}", "unknown op \"Stored\"");
        assertInvalid("{\"op\":\"MATCH\",\"local_hashes\":[]}", "case-sensitive");
        assertInvalid("{\"op\":\"match \",\"local_hashes\":[]}", "unknown op \"match \"");
        assertInvalid("{\"op\":\"flush\"}", "unknown op \"flush\"");
        assertInvalid("{\"op\":\"a\\nb\"}", "unknown op \"a\\u000ab\"");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # required fields missing or null
            {"op":"stored","blocks":[]}                                         | required field "worker" is missing
            {"op":"stored","worker":null,"blocks":[]}                           | required field "worker" is null
            {"op":"stored","worker":1}                                          | needs "blocks" (hash form) or "token_ids"
            {"op":"stored","worker":1,"blocks":null}                            | required field "blocks" is null
            {"op":"stored","worker":1,"token_ids":[1],"block_hashes":[]}        | required field "block_size" is missing
            {"op":"stored","worker":1,"token_ids":[1],"block_size":1}           | required field "block_hashes" is missing
            {"op":"stored","worker":1,"token_ids":null,"block_size":1,"block_hashes":[]} | required field "token_ids" is null
            {"op":"stored","worker":1,"token_ids":[1],"block_size":null,"block_hashes":[1]} | required field "block_size" is null
            {"op":"removed","worker":1}                                         | required field "block_hashes" is missing
            {"op":"removed","worker":1,"block_hashes":null}                     | required field "block_hashes" is null
            {"op":"removed","block_hashes":[1]}                                 | required field "worker" is missing
            {"op":"cleared"}                                                    | required field "worker" is missing
            {"op":"cleared","worker":null}                                      | required field "worker" is null
            {"op":"remove_worker"}                                              | required field "worker" is missing
            {"op":"remove_worker","worker":null}                                | required field "worker" is null
            {"op":"match"}                                                      | needs "local_hashes" (hash form) or "token_ids"
            {"op":"match","local_hashes":null}                                  | required field "local_hashes" is null
            {"op":"match","token_ids":[1,2]}                                    | required field "block_size" is missing
            {"op":"match","token_ids":null,"block_size":2}                      | required field "token_ids" is null
            # optional fields given as null (only parent_hash, lora_name, cache_namespace may be)
            {"op":"stored","worker":1,"dp_rank":null,"blocks":[]}               | field "dp_rank" is null
            {"op":"cleared","worker":1,"dp_rank":null}                          | field "dp_rank" is null
            {"op":"removed","worker":1,"dp_rank":null,"block_hashes":[]}        | field "dp_rank" is null
            # wrong types
            {"op":"stored","worker":"1","blocks":[]}                            | worker must be an integer, got a string
            {"op":"stored","worker":true,"blocks":[]}                           | worker must be an integer, got a boolean
            {"op":"stored","worker":[1],"blocks":[]}                            | worker must be an integer, got an array
            {"op":"stored","worker":{},"blocks":[]}                             | worker must be an integer, got an object
            {"op":"stored","worker":1,"dp_rank":"0","blocks":[]}                | dp_rank must be an integer, got a string
            {"op":"stored","worker":1,"parent_hash":"5","blocks":[]}            | parent_hash must be an integer, got a string
            {"op":"stored","worker":1,"parent_hash":false,"blocks":[]}          | parent_hash must be an integer, got a boolean
            {"op":"stored","worker":1,"blocks":{"block_hash":1,"tokens_hash":2}} | blocks must be an array, got an object
            {"op":"stored","worker":1,"blocks":[[1,2]]}                         | blocks[0] must be an object
            {"op":"stored","worker":1,"blocks":[null]}                          | blocks[0] must be an object {"block_hash":E,"tokens_hash":L}, got null
            {"op":"stored","worker":1,"blocks":[{"block_hash":1,"tokens_hash":2},5]} | blocks[1] must be an object
            {"op":"stored","worker":1,"blocks":[{"block_hash":"1","tokens_hash":2}]} | blocks[0].block_hash must be an integer, got a string
            {"op":"stored","worker":1,"blocks":[{"block_hash":1,"tokens_hash":null}]} | blocks[0].tokens_hash is null
            {"op":"stored","worker":1,"blocks":[{"block_hash":1}]}              | blocks[0] lacks "tokens_hash"
            {"op":"stored","worker":1,"blocks":[{"tokens_hash":1}]}             | blocks[0] lacks "block_hash"
            {"op":"stored","worker":1,"blocks":[{}]}                            | blocks[0] lacks "block_hash"
            {"op":"stored","worker":1,"token_ids":[1],"block_size":"1","block_hashes":[1]} | block_size must be an integer, got a string
            {"op":"stored","worker":1,"token_ids":[1],"block_size":1,"block_hashes":[1],"lora_name":7} | lora_name must be a string, got a number
            {"op":"stored","worker":1,"token_ids":[1],"block_size":1,"block_hashes":[1],"lora_name":["a"]} | lora_name must be a string, got an array
            {"op":"stored","worker":1,"token_ids":[1],"block_size":1,"block_hashes":[1],"cache_namespace":false} | cache_namespace must be a string, got a boolean
            {"op":"stored","worker":1,"token_ids":"1,2","block_size":1,"block_hashes":[1,2]} | token_ids must be an array, got a string
            {"op":"match","local_hashes":[true]}                                | local_hashes[0] must be an integer, got a boolean
            {"op":"match","local_hashes":[1,null]}                              | local_hashes[1] must be an integer, got null
            {"op":"match","local_hashes":"11"}                                  | local_hashes must be an array, got a string
            {"op":"match","local_hashes":11}                                    | local_hashes must be an array, got a number
            {"op":"match","token_ids":["1"],"block_size":1}                     | token_ids[0] must be an integer, got a string
            {"op":"match","token_ids":[1],"block_size":1,"lora_name":1}         | lora_name must be a string, got a number
            {"op":"removed","worker":1,"block_hashes":[{}]}                     | block_hashes[0] must be an integer, got an object
            # numbers that are not JSON integers
            {"op":"cleared","worker":3.0}                                       | worker must be an integer, got 3.0
            {"op":"cleared","worker":1e3}                                       | worker must be an integer, got 1e3
            {"op":"cleared","worker":1E+3}                                      | worker must be an integer, got 1E+3
            {"op":"match","local_hashes":[1.5]}                                 | local_hashes[0] must be an integer, got 1.5
            {"op":"match","local_hashes":[-0.0]}                                | local_hashes[0] must be an integer, got -0.0
            {"op":"match","token_ids":[1e0],"block_size":1}                     | token_ids[0] must be an integer, got 1e0
            {"op":"match","token_ids":[1],"block_size":4.0}                     | block_size must be an integer, got 4.0
            {"op":"stored","worker":1,"parent_hash":5.5,"blocks":[]}            | parent_hash must be an integer, got 5.5
            {"op":"stored","worker":1,"blocks":[{"block_hash":1,"tokens_hash":2e1}]} | blocks[0].tokens_hash must be an integer, got 2e1
            # out of range
            {"op":"match","local_hashes":[18446744073709551616]}                | local_hashes[0] is outside the hash range
            {"op":"match","local_hashes":[-9223372036854775809]}                | local_hashes[0] is outside the hash range
            {"op":"match","local_hashes":[99999999999999999999]}                | local_hashes[0] is outside the hash range
            {"op":"match","local_hashes":[123456789012345678901234567890]}      | local_hashes[0] is outside the hash range
            {"op":"stored","worker":1,"parent_hash":18446744073709551616,"blocks":[]} | parent_hash is outside the hash range
            {"op":"stored","worker":1,"blocks":[{"block_hash":-9223372036854775809,"tokens_hash":1}]} | blocks[0].block_hash is outside the hash range
            {"op":"removed","worker":1,"block_hashes":[1,18446744073709551616]} | block_hashes[1] is outside the hash range
            {"op":"cleared","worker":-1}                                        | worker is outside 0..18446744073709551615: -1
            {"op":"cleared","worker":18446744073709551616}                      | worker is outside 0..18446744073709551615
            {"op":"remove_worker","worker":-9223372036854775808}                | worker is outside 0..18446744073709551615
            {"op":"cleared","worker":1,"dp_rank":4294967296}                    | dp_rank is outside 0..4294967295: 4294967296
            {"op":"cleared","worker":1,"dp_rank":-1}                            | dp_rank is outside 0..4294967295: -1
            {"op":"match","token_ids":[4294967296],"block_size":1}              | token_ids[0] is outside 0..4294967295
            {"op":"match","token_ids":[1,-1],"block_size":1}                    | token_ids[1] is outside 0..4294967295
            {"op":"match","token_ids":[18446744073709551615],"block_size":1}    | token_ids[0] is outside 0..4294967295
            {"op":"match","token_ids":[1],"block_size":0}                       | block_size is outside 1..4294967295: 0
            {"op":"match","token_ids":[1],"block_size":-4}                      | block_size is outside 1..4294967295
            {"op":"match","token_ids":[1],"block_size":4294967296}              | block_size is outside 1..4294967295
            {"op":"stored","worker":1,"token_ids":[1],"block_size":0,"block_hashes":[]} | block_size is outside 1..4294967295
            # both forms
            {"op":"stored","worker":1,"blocks":[],"token_ids":[1,2,3,4],"block_size":4,"block_hashes":[1]} | carries both forms: "blocks" and "token_ids"
            {"op":"stored","worker":1,"blocks":[],"token_ids":null}             | carries both forms
            {"op":"match","local_hashes":[],"token_ids":[],"block_size":4}      | carries both forms: "local_hashes" and "token_ids"
            # token form: engine hash count must equal the number of full blocks
            {"op":"stored","worker":1,"token_ids":[1,2,3,4],"block_size":4,"block_hashes":[]} | 4 token_ids at block_size 4 make 1 full block(s), but block_hashes has 0
            {"op":"stored","worker":1,"token_ids":[1,2,3],"block_size":4,"block_hashes":[7]} | make 0 full block(s), but block_hashes has 1
            {"op":"stored","worker":1,"token_ids":[1,2,3,4,5,6,7,8,9],"block_size":4,"block_hashes":[1,2,3]} | make 2 full block(s), but block_hashes has 3
            # duplicate names of defined fields
            {"op":"cleared","worker":1,"worker":2}                              | field "worker" appears twice
            {"op":"cleared","op":"cleared","worker":1}                          | field "op" appears twice
            {"op":"cleared","worker":1,"\\u0077orker":1}                        | field "worker" appears twice
            {"op":"match","local_hashes":[1],"dp_rank":1,"dp_rank":2}           | field "dp_rank" appears twice
            {"op":"stored","worker":1,"blocks":[{"block_hash":1,"block_hash":2,"tokens_hash":3}]} | field "blocks[0].block_hash" appears twice
            """)
    void invalidCases(String line, String reason) {
        assertInvalid(line.replace("\\\\", "\\"), reason);
    }

    // ------------------------------------------------------------------ reuse and robustness

    @Test
    void resultsAreIndependentOfLaterLines() {
        Op.TokenMatch big = (Op.TokenMatch) parse("{\"op\":\"match\",\"token_ids\":["
                + String.join(
                        ",",
                        IntStream.range(0, 5000).mapToObj(Integer::toString).toList()) + "],\"block_size\":16}");
        Op.HashMatch small = (Op.HashMatch) parse("{\"op\":\"match\",\"local_hashes\":[7]}");
        Op.TokenMatch other = (Op.TokenMatch) parse("{\"op\":\"match\",\"token_ids\":[9,9,9],\"block_size\":1}");
        assertEquals(5000, big.tokenIds().length);
        assertEquals(4999, big.tokenIds()[4999]);
        assertArrayEquals(new long[] {7}, small.localHashes());
        assertArrayEquals(new int[] {9, 9, 9}, other.tokenIds());
        // a field seen on one line does not leak into the next
        assertInvalid("{\"op\":\"cleared\"}", "required field \"worker\" is missing");
        assertEquals(
                new KvEvent.Stored(new Worker(1, 0), OptionalLong.empty(), NONE, NONE),
                event("{\"op\":\"stored\",\"worker\":1,\"blocks\":[]}"));
    }

    /** Mutated and truncated lines: the parser answers every one of them and never throws. */
    @Test
    void arbitraryBytesNeverThrow() {
        List<byte[]> seeds = new ArrayList<>();
        for (String s : List.of(
                "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":0,\"parent_hash\":null,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":11}]}",
                "{\"op\":\"stored\",\"worker\":5,\"token_ids\":[1,2,3,4,5],\"block_size\":4,\"block_hashes\":[-3],\"lora_name\":\"\\u00fcn\"}",
                "{\"op\":\"removed\",\"worker\":18446744073709551615,\"block_hashes\":[1,2,-9223372036854775808]}",
                "{\"op\":\"match\",\"local_hashes\":[1,2,3],\"x\":{\"y\":[1.5e3,true,null,\"\u00e9\"]}}",
                "{\"op\":\"match\",\"token_ids\":[1,2],\"block_size\":4294967295,\"cache_namespace\":\"\\ud83d\\ude00\"}")) {
            seeds.add(s.getBytes(StandardCharsets.UTF_8));
        }
        byte[] alphabet = "{}[]\":,\\-+.0123456789eEnulltruefalse \t\r'/u".getBytes(StandardCharsets.US_ASCII);
        long seed = TestScale.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        int iterations = TestScale.iterations(30_000, 1_000_000);
        int valid = 0;
        for (int i = 0; i < iterations; i++) {
            byte[] line = seeds.get(rnd.nextInt(seeds.size())).clone();
            int edits = 1 + rnd.nextInt(4);
            for (int e = 0; e < edits && line.length > 0; e++) {
                int at = rnd.nextInt(line.length);
                switch (rnd.nextInt(4)) {
                    case 0 -> line[at] = alphabet[rnd.nextInt(alphabet.length)];
                    case 1 -> line[at] = (byte) rnd.nextInt(256);
                    case 2 -> line = Arrays.copyOf(line, at);
                    default -> {
                        byte[] longer = new byte[line.length + 1];
                        System.arraycopy(line, 0, longer, 0, at);
                        longer[at] = alphabet[rnd.nextInt(alphabet.length)];
                        System.arraycopy(line, at, longer, at + 1, line.length - at);
                        line = longer;
                    }
                }
            }
            // parse a slice of a larger buffer, with bytes around it that must not be read
            byte[] framed = new byte[line.length + 2];
            framed[0] = '{';
            System.arraycopy(line, 0, framed, 1, line.length);
            framed[framed.length - 1] = '}';
            Op op;
            try {
                op = parser.parse(framed, 1, line.length);
            } catch (RuntimeException ex) {
                throw new AssertionError(
                        "threw on " + new String(line, StandardCharsets.ISO_8859_1) + " (" + TestScale.replay(seed)
                                + ")",
                        ex);
            }
            assertNotNull(op);
            if (op instanceof Op.Invalid inv) {
                assertFalse(inv.reason().isBlank() || inv.reason().contains("\n"), inv.reason());
            } else {
                valid++;
            }
            // the slice answer equals the answer for the same bytes alone
            assertEquals(op, parser.parse(line), () -> "slice vs whole, " + TestScale.replay(seed));
        }
        if (valid == 0) {
            fail("no mutated line stayed valid: the mutation is too aggressive to exercise the valid paths");
        }
    }
}
