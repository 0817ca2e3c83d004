package io.kvprefix.opstream.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * Lines for tests of the op-stream reader (docs/SPEC.md section 5) beyond the one plain form that
 * {@link OpStreamWriter} writes:
 *
 * <ul>
 *   <li>{@link #render}: a random but <em>valid</em> spelling of an op's line, decided entirely by the
 *       given {@link Random} (same seed, same line): hashes of 2^63 and more sometimes written as
 *       negative decimals (their two's-complement bits); {@code dp_rank} 0 sometimes left out;
 *       an absent {@code parent_hash} left out or {@code null}; an absent {@code lora_name} /
 *       {@code cache_namespace} left out, {@code null} or {@code ""}; key order shuffled; unknown extra
 *       fields of every JSON type (also nested objects that contain an {@code "op"} key, numbers too
 *       big for 64 bits, floats), on the line and inside block objects; an ignored {@code dp_rank} on
 *       {@code match} and {@code remove_worker}; spaces and tabs between tokens; strings with escapes
 *       (escaped slashes, backslash-u escapes of non-ASCII characters and of surrogate pairs) and object
 *       keys written with backslash-u escapes.
 *       A reader that follows docs/SPEC.md section 5 reads it as exactly the same op.
 *   <li>{@link #malformedCatalogue}: one line per validation case of section 5 (plus a few more),
 *       each an {@link Op.Invalid} carrying its line and the reason; every one must answer
 *       {@code {"status":"invalid_input"}}. {@link #invalidUtf8Lines} gives the byte-level cases a
 *       {@code String} cannot carry.
 *   <li>{@link #randomMalformed}: a catalogue line or a valid line broken at random (truncated,
 *       trailing data, trailing comma, a mis-cased op).
 * </ul>
 *
 * <p>This is not a second writer of the format: the plain form, and every result line, come from
 * {@link OpStreamWriter}; these are the other spellings a reader must accept or reject.
 *
 * <p>No line contains {@code \n}. Thread-safety: stateless; a {@link Random} passed in must not be
 * shared between threads.
 */
public final class LineVariants {
    private LineVariants() {}

    // ================================================================== valid lines

    /** A random, valid spelling of {@code op}'s line chosen by {@code rnd} (an {@link Op.Invalid} gives its line as is). */
    public static String render(Op op, Random rnd) {
        Objects.requireNonNull(rnd, "rnd");
        return switch (op) {
            case Op.Invalid i -> OpStreamWriter.line(i);
            case Op.Explain x -> OpStreamWriter.line(x);
            case Op.Event e -> event(e.event(), rnd);
            case Op.HashMatch m -> {
                Obj o = new Obj(rnd);
                o.put("op", str("match", rnd));
                o.put("local_hashes", hashes(m.localHashes(), rnd));
                ignoredRank(o, rnd);
                yield o.render();
            }
            case Op.TokenMatch m -> {
                Obj o = new Obj(rnd);
                o.put("op", str("match", rnd));
                o.put("token_ids", tokens(m.tokenIds(), rnd));
                o.put("block_size", Integer.toUnsignedString(m.blockSize()));
                salt(o, "lora_name", m.loraName(), rnd);
                salt(o, "cache_namespace", m.cacheNamespace(), rnd);
                List<long[]> items = new ArrayList<>();
                for (BlockHasher.MmSpan sp : m.mm()) {
                    items.add(new long[] {sp.start(), sp.end(), sp.mmHash()});
                }
                mm(o, items, rnd);
                ignoredRank(o, rnd);
                yield o.render();
            }
        };
    }

    private static String event(KvEvent event, Random rnd) {
        Obj o = new Obj(rnd);
        switch (event) {
            case KvEvent.Stored s -> {
                head(o, "stored", s.worker(), rnd);
                parent(o, s.parentHash().isPresent(), s.parentHash().orElse(0), rnd);
                StringBuilder sb = new StringBuilder();
                sb.append('[');
                for (int i = 0; i < s.size(); i++) {
                    if (i > 0) {
                        sb.append(ws(rnd)).append(',').append(ws(rnd));
                    }
                    Obj b = new Obj(rnd);
                    b.put("block_hash", hash(s.blockHashes()[i], rnd));
                    b.put("tokens_hash", hash(s.localHashes()[i], rnd));
                    sb.append(b.renderInner());
                }
                sb.append(']');
                o.put("blocks", sb.toString());
                medium(o, s.medium(), rnd);
            }
            case KvEvent.StoredTokens t -> {
                head(o, "stored", t.worker(), rnd);
                parent(o, t.parentHash().isPresent(), t.parentHash().orElse(0), rnd);
                o.put("token_ids", tokens(t.tokenIds(), rnd));
                o.put("block_size", Integer.toUnsignedString(t.blockSize()));
                o.put("block_hashes", hashes(t.blockHashes(), rnd));
                salt(o, "lora_name", t.loraName(), rnd);
                salt(o, "cache_namespace", t.cacheNamespace(), rnd);
                List<long[]> items = new ArrayList<>();
                for (int b = 0; t.mmHashes() != null && b < t.mmHashes().length; b++) {
                    for (long h : t.mmHashes()[b] == null ? new long[0] : t.mmHashes()[b]) {
                        items.add(new long[] {(long) b * t.blockSize(), (long) (b + 1) * t.blockSize(), h});
                    }
                }
                mm(o, items, rnd);
                medium(o, t.medium(), rnd);
            }
            case KvEvent.Removed r -> {
                head(o, "removed", r.worker(), rnd);
                o.put("block_hashes", hashes(r.blockHashes(), rnd));
                medium(o, r.medium(), rnd);
            }
            case KvEvent.Copied c -> {
                head(o, "copied", c.worker(), rnd);
                o.put("block_hashes", hashes(c.blockHashes(), rnd));
                o.put("medium", str(c.medium().name(), rnd));
            }
            case KvEvent.Cleared c -> head(o, "cleared", c.worker(), rnd);
            case KvEvent.RemoveWorker rw -> {
                o.put("op", str("remove_worker", rnd));
                o.put("worker", Long.toUnsignedString(rw.workerId()));
                ignoredRank(o, rnd);
            }
        }
        return o.render();
    }

    private static void head(Obj o, String op, Worker w, Random rnd) {
        o.put("op", str(op, rnd));
        o.put("worker", Long.toUnsignedString(w.workerId()));
        if (w.dpRank() != 0 || rnd.nextInt(10) < 6) {
            o.put("dp_rank", Integer.toUnsignedString(w.dpRank()));
        }
    }

    private static void parent(Obj o, boolean has, long parent, Random rnd) {
        if (has) {
            o.put("parent_hash", hash(parent, rnd));
        } else if (rnd.nextBoolean()) {
            o.put("parent_hash", "null");
        }
    }

    /** A medium: the GPU left out or written; a lower tier written. */
    private static void medium(Obj o, Medium m, Random rnd) {
        if (m != Medium.GPU || rnd.nextInt(3) == 0) {
            o.put("medium", str(m.name(), rnd));
        }
    }

    /** {@code "mm"} items {@code [START,END,MM_HASH]}; none: left out, {@code null} or {@code []}. */
    private static void mm(Obj o, List<long[]> items, Random rnd) {
        if (items.isEmpty()) {
            switch (rnd.nextInt(4)) {
                case 0 -> o.put("mm", "null");
                case 1 -> o.put("mm", "[" + ws(rnd) + "]");
                default -> {} // left out
            }
            return;
        }
        StringBuilder sb = new StringBuilder("[").append(ws(rnd));
        for (int i = 0; i < items.size(); i++) {
            long[] it = items.get(i);
            sb.append(i > 0 ? "," + ws(rnd) : "")
                    .append('[')
                    .append(it[0])
                    .append(',')
                    .append(it[1])
                    .append(',')
                    .append(hash(it[2], rnd))
                    .append(']');
        }
        o.put("mm", sb.append(ws(rnd)).append(']').toString());
    }

    /** An absent salt: left out, null or ""; a present one: the string. */
    private static void salt(Obj o, String key, String value, Random rnd) {
        if (value != null && !value.isEmpty()) {
            o.put(key, str(value, rnd));
            return;
        }
        switch (rnd.nextInt(4)) {
            case 0 -> o.put(key, "null");
            case 1 -> o.put(key, str("", rnd));
            default -> {} // left out
        }
    }

    /** {@code dp_rank} is ignored on match and remove_worker: sometimes give one anyway. */
    private static void ignoredRank(Obj o, Random rnd) {
        if (rnd.nextInt(8) == 0) {
            o.put("dp_rank", Integer.toUnsignedString(rnd.nextInt(3) == 0 ? -1 : rnd.nextInt(4)));
        }
    }

    /** A 64-bit hash: unsigned decimal, or (randomly, when the top bit is set) the negative decimal of the same bits. */
    private static String hash(long v, Random rnd) {
        if (v < 0 && rnd.nextBoolean()) {
            return Long.toString(v);
        }
        return Long.toUnsignedString(v);
    }

    private static String hashes(long[] a, Random rnd) {
        StringBuilder sb = new StringBuilder("[").append(ws(rnd));
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(ws(rnd)).append(',').append(ws(rnd));
            }
            sb.append(hash(a[i], rnd));
        }
        return sb.append(ws(rnd)).append(']').toString();
    }

    private static String tokens(int[] a, Random rnd) {
        StringBuilder sb = new StringBuilder("[").append(ws(rnd));
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(ws(rnd)).append(',').append(ws(rnd));
            }
            sb.append(Integer.toUnsignedString(a[i]));
        }
        return sb.append(ws(rnd)).append(']').toString();
    }

    /** Whitespace between tokens: mostly none, sometimes spaces and tabs (never a newline). */
    private static String ws(Random rnd) {
        int r = rnd.nextInt(20);
        if (r < 15) {
            return "";
        }
        if (r < 18) {
            return " ";
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
            sb.append(rnd.nextBoolean() ? ' ' : '\t');
        }
        return sb.toString();
    }

    /** A JSON string (RFC 8259), optional escapes used at random. */
    static String str(String s, Random rnd) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean escapeAnyway = rnd.nextInt(c < 0x80 ? 40 : 3) == 0;
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                case '/' -> sb.append(escapeAnyway ? "\\/" : "/");
                default -> {
                    if (Character.isHighSurrogate(c)
                            && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        // A surrogate pair is one character: escape both halves or neither, never one
                        // (a raw half alone cannot be encoded as UTF-8).
                        char low = s.charAt(++i);
                        if (escapeAnyway) {
                            sb.append(String.format("\\u%04x\\u%04x", (int) c, (int) low));
                        } else {
                            sb.append(c).append(low);
                        }
                    } else if (c < 0x20 || escapeAnyway) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** Extra fields a reader must ignore: every JSON type, nesting, an inner "op", huge numbers, floats. */
    private static final String[][] EXTRAS = {
        {"ts", "1.7e9"},
        {"x_extra", "null"},
        {"flag", "false"},
        {"note", "\"\\u00e9t\\u00e9 \\\"quoted\\\" {not json}\""},
        {"meta", "{\"op\":\"cleared\",\"worker\":-1,\"list\":[1,2.5,{\"b\":[]}],\"s\":\"\"}"},
        {"big", "123456789012345678901234567890"},
        {"neg", "-42"},
        {"empty_array", "[]"},
        {"nested", "[[[{}]]]"},
        {"Op", "\"remove_worker\""},
    };

    /** A JSON object under construction: fields in insertion order, randomised at render time. */
    private static final class Obj {
        private final Random rnd;
        private final List<String[]> fields = new ArrayList<>();

        Obj(Random rnd) {
            this.rnd = rnd;
        }

        void put(String key, String json) {
            fields.add(new String[] {key, json});
        }

        /** The object as a whole line, with leading and trailing whitespace at random. */
        String render() {
            return ws(rnd) + renderInner() + ws(rnd);
        }

        String renderInner() {
            List<String[]> f = new ArrayList<>(fields);
            int extras = rnd.nextInt(10) < 7 ? 0 : 1 + rnd.nextInt(2);
            for (int i = 0; i < extras; i++) {
                f.add(EXTRAS[rnd.nextInt(EXTRAS.length)].clone());
            }
            if (rnd.nextBoolean()) {
                Collections.shuffle(f, rnd);
            }
            StringBuilder sb = new StringBuilder("{").append(ws(rnd));
            List<String> seen = new ArrayList<>();
            boolean first = true;
            for (String[] kv : f) {
                if (seen.contains(kv[0])) {
                    continue; // an extra picked twice
                }
                seen.add(kv[0]);
                if (!first) {
                    sb.append(ws(rnd)).append(',').append(ws(rnd));
                }
                first = false;
                sb.append(key(kv[0]))
                        .append(ws(rnd))
                        .append(':')
                        .append(ws(rnd))
                        .append(kv[1]);
            }
            return sb.append(ws(rnd)).append('}').toString();
        }

        private String key(String k) {
            if (rnd.nextInt(25) == 0) {
                StringBuilder sb = new StringBuilder("\"");
                for (int i = 0; i < k.length(); i++) {
                    sb.append(i == 0 ? String.format("\\u%04X", (int) k.charAt(i)) : String.valueOf(k.charAt(i)));
                }
                return sb.append('"').toString();
            }
            return "\"" + k + "\"";
        }
    }

    // ================================================================== malformed lines

    /**
     * A line that is not valid UTF-8, as raw bytes. Immutable as long as the array is not modified.
     *
     * @param line the bytes of the line, without its {@code \n}
     * @param why what is wrong with it
     */
    public record MalformedBytes(byte[] line, String why) {}

    private static final String STORED = "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":0,\"parent_hash\":null,"
            + "\"blocks\":[{\"block_hash\":101,\"tokens_hash\":5}]}";
    private static final String CLEARED = "{\"op\":\"cleared\",\"worker\":1}";

    /**
     * One malformed line per validation case of docs/SPEC.md section 5, each with its reason. Every line
     * must be answered with {@code {"status":"invalid_input"}} and change nothing.
     */
    public static List<Op.Invalid> malformedCatalogue() {
        List<Op.Invalid> c = new ArrayList<>();
        // --- not exactly one JSON object
        add(c, "", "blank line");
        add(c, "  \t ", "whitespace only");
        add(c, CLEARED + " x", "trailing data after the object");
        add(c, CLEARED + CLEARED, "two objects on one line");
        add(c, CLEARED + "\r" + CLEARED, "\\r is not a line separator: trailing data after the object");
        add(c, CLEARED + ",", "trailing comma after the object");
        add(c, "{'op':'cleared','worker':1}", "single quotes");
        add(c, "{\"op\":'cleared',\"worker\":1}", "a single-quoted string value");
        add(c, "{op:\"cleared\",worker:1}", "unquoted keys");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[101,]}", "trailing comma in an array");
        add(c, "{\"op\":\"cleared\",\"worker\":1,}", "trailing comma in an object");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[,101]}", "leading comma in an array");
        add(c, "{\"op\":\"match\",\"local_hashes\":[NaN]}", "NaN");
        add(c, "{\"op\":\"match\",\"local_hashes\":[Infinity]}", "Infinity");
        add(c, "{\"op\":\"match\",\"local_hashes\":[-Infinity]}", "-Infinity");
        add(c, CLEARED + " // comment", "a // comment");
        add(c, "/* comment */ " + CLEARED, "a /* */ comment");
        add(c, "{\"op\":\"cleared\",/* c */\"worker\":1}", "a comment inside the object");
        add(c, "# " + CLEARED, "a # comment line");
        add(c, "[" + CLEARED + "]", "a top-level array");
        add(c, "42", "a top-level number");
        add(c, "\"cleared\"", "a top-level string");
        add(c, "null", "a top-level null");
        add(c, "true", "a top-level boolean");
        add(c, "{\"op\":\"cleared\",\"worker\":1", "unterminated object");
        add(c, CLEARED + "}", "an extra closing brace");
        add(c, "{\"op\":\"cleared\" \"worker\":1}", "missing comma between members");
        add(c, "{\"op\":\"cleared\",\"worker\"1}", "missing colon");
        add(c, "{\"op\":\"cleared\",\"worker\":01}", "a number with a leading zero");
        add(c, "{\"op\":\"cleared\",\"worker\":+1}", "a number with a plus sign");
        add(c, "{\"op\":\"cleared\",\"worker\":.5}", "a number without an integer part");
        add(c, "{\"op\":\"cleared\",\"worker\":1.}", "a number with an empty fraction");
        add(c, "{\"op\":\"cleared\",\"worker\":0x10}", "a hexadecimal number");
        add(c, "{\"op\":\"cleared\\x\",\"worker\":1}", "an invalid string escape");
        add(
                c,
                "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":\"a\tb\"}",
                "a raw control character (tab) inside a string");
        add(c, "{\"op\":\"cleared\",\"worker\":1,\"x\":\"unterminated}", "an unterminated string");
        add(c, "{\"op\":\"cleared\",\"worker\":tru}", "a misspelled literal");
        add(c, "{\"op\":\"match\",\"local_hashes\":[5]}{", "trailing garbage");
        // --- unknown op
        add(c, "{\"op\":\"Stored\",\"worker\":1,\"blocks\":[]}", "unknown op (op names are case-sensitive)");
        add(c, "{\"op\":\"MATCH\",\"local_hashes\":[5]}", "unknown op (op names are case-sensitive)");
        add(c, "{\"op\":\"store\",\"worker\":1,\"blocks\":[]}", "unknown op");
        add(c, "{\"op\":\" cleared\",\"worker\":1}", "unknown op (leading space in the name)");
        add(c, "{\"op\":\"\",\"worker\":1}", "unknown op (empty)");
        add(c, "{\"op\":\"clear\",\"worker\":1}", "unknown op");
        // --- a required field missing or null
        add(c, "{}", "op missing");
        add(c, "{\"worker\":1}", "op missing");
        add(c, "{\"op\":null,\"worker\":1}", "op null");
        add(c, "{\"op\":1,\"worker\":1}", "op is a number");
        add(c, "{\"op\":[\"cleared\"],\"worker\":1}", "op is an array");
        add(c, "{\"op\":\"stored\",\"blocks\":[]}", "stored: worker missing");
        add(c, "{\"op\":\"stored\",\"worker\":null,\"blocks\":[]}", "stored: worker null");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"parent_hash\":null}", "stored: neither blocks nor token_ids");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":null}", "stored: blocks null");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"tokens_hash\":5}]}", "stored: block_hash missing");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101}]}", "stored: tokens_hash missing");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":null,\"tokens_hash\":5}]}",
                "stored: block_hash null");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":null}]}",
                "stored: tokens_hash null");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":[null]}", "stored: a block is null");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":5},{}]}",
                "stored: an empty block object");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_hashes\":[101]}",
                "stored token form: block_size missing");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":null,\"block_hashes\":[101]}",
                "stored token form: block_size null");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":4}",
                "stored token form: block_hashes missing");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":4,\"block_hashes\":null}",
                "stored token form: block_hashes null");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":null,\"block_size\":4,\"block_hashes\":[]}",
                "stored token form: token_ids null");
        add(c, "{\"op\":\"removed\",\"worker\":1}", "removed: block_hashes missing");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":null}", "removed: block_hashes null");
        add(c, "{\"op\":\"removed\",\"block_hashes\":[101]}", "removed: worker missing");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[101,null]}", "removed: a null hash");
        add(c, "{\"op\":\"cleared\"}", "cleared: worker missing");
        add(c, "{\"op\":\"cleared\",\"worker\":null}", "cleared: worker null");
        add(c, "{\"op\":\"remove_worker\"}", "remove_worker: worker missing");
        add(c, "{\"op\":\"remove_worker\",\"worker\":null}", "remove_worker: worker null");
        add(c, "{\"op\":\"match\"}", "match: neither local_hashes nor token_ids");
        add(c, "{\"op\":\"match\",\"local_hashes\":null}", "match: local_hashes null");
        add(c, "{\"op\":\"match\",\"local_hashes\":[5,null]}", "match: a null hash");
        add(c, "{\"op\":\"match\",\"token_ids\":null,\"block_size\":4}", "match: token_ids null");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4]}", "match token form: block_size missing");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":null}", "match token form: block_size null");
        // --- an optional field given as null where null is not allowed
        add(c, "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":null,\"blocks\":[]}", "stored: dp_rank null");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"dp_rank\":null,\"block_hashes\":[]}", "removed: dp_rank null");
        add(c, "{\"op\":\"cleared\",\"worker\":1,\"dp_rank\":null}", "cleared: dp_rank null");
        // --- lora_name / cache_namespace not a string
        add(c, "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":5}", "lora_name is a number");
        add(c, "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":true}", "lora_name is a boolean");
        add(c, "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":[\"a\"]}", "lora_name is an array");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1],\"block_size\":1,\"block_hashes\":[7],\"lora_name\":{\"a\":1}}",
                "stored: lora_name is an object");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1],\"block_size\":1,\"block_hashes\":[7],\"cache_namespace\":7}",
                "stored: cache_namespace is a number");
        add(
                c,
                "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"cache_namespace\":false}",
                "cache_namespace is a boolean");
        // --- a number that is not a JSON integer
        add(c, "{\"op\":\"cleared\",\"worker\":1.0}", "worker 1.0 is not an integer");
        add(c, "{\"op\":\"cleared\",\"worker\":1e3}", "worker 1e3 is not an integer");
        add(c, "{\"op\":\"cleared\",\"worker\":1E0}", "worker 1E0 is not an integer");
        add(c, "{\"op\":\"cleared\",\"worker\":1,\"dp_rank\":0.0}", "dp_rank 0.0 is not an integer");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101.0,\"tokens_hash\":5}]}",
                "block_hash 101.0");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":5e0}]}",
                "tokens_hash 5e0");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"parent_hash\":1E2,\"blocks\":[]}", "parent_hash 1E2");
        add(c, "{\"op\":\"match\",\"local_hashes\":[5.5]}", "a local hash 5.5");
        add(c, "{\"op\":\"match\",\"local_hashes\":[-0.0]}", "a local hash -0.0");
        add(c, "{\"op\":\"match\",\"token_ids\":[1.0,2,3,4],\"block_size\":4}", "a token 1.0");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":4.0}", "block_size 4.0");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[1e2]}", "a removed hash 1e2");
        // --- a string or boolean where a number belongs
        add(c, "{\"op\":\"cleared\",\"worker\":\"1\"}", "worker is a string");
        add(c, "{\"op\":\"cleared\",\"worker\":true}", "worker is a boolean");
        add(c, "{\"op\":\"cleared\",\"worker\":1,\"dp_rank\":\"0\"}", "dp_rank is a string");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"parent_hash\":\"101\",\"blocks\":[]}", "parent_hash is a string");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"parent_hash\":false,\"blocks\":[]}", "parent_hash is a boolean");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":true,\"tokens_hash\":5}]}",
                "block_hash is a boolean");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":\"5\"}]}",
                "tokens_hash is a string");
        add(c, "{\"op\":\"match\",\"local_hashes\":[\"5\"]}", "a local hash is a string");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,\"4\"],\"block_size\":4}", "a token is a string");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":\"4\"}", "block_size is a string");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[false]}", "a removed hash is a boolean");
        // --- a field of the wrong structure
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":{}}", "blocks is an object");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":5}", "blocks is a number");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"blocks\":[[101,5]]}", "a block is an array");
        add(c, "{\"op\":\"match\",\"local_hashes\":5}", "local_hashes is a number");
        add(c, "{\"op\":\"match\",\"local_hashes\":[[5]]}", "a local hash is an array");
        add(c, "{\"op\":\"match\",\"token_ids\":\"1234\",\"block_size\":4}", "token_ids is a string");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":{\"a\":1}}", "block_hashes is an object");
        // --- numbers out of range
        add(c, "{\"op\":\"match\",\"local_hashes\":[18446744073709551616]}", "a hash of 2^64");
        add(c, "{\"op\":\"match\",\"local_hashes\":[-9223372036854775809]}", "a hash below -2^63");
        add(c, "{\"op\":\"match\",\"local_hashes\":[99999999999999999999999999]}", "a hash far out of range");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":18446744073709551616,\"tokens_hash\":5}]}",
                "block_hash of 2^64");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":-9223372036854775809}]}",
                "tokens_hash below -2^63");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"parent_hash\":18446744073709551616,\"blocks\":[]}",
                "parent_hash of 2^64");
        add(c, "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[18446744073709551616]}", "a removed hash of 2^64");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1],\"block_size\":1,\"block_hashes\":[18446744073709551617]}",
                "a token-form block hash of 2^64+1");
        add(c, "{\"op\":\"cleared\",\"worker\":-1}", "a negative worker");
        add(c, "{\"op\":\"cleared\",\"worker\":18446744073709551616}", "worker 2^64");
        add(c, "{\"op\":\"remove_worker\",\"worker\":-5}", "remove_worker: a negative worker");
        add(c, "{\"op\":\"remove_worker\",\"worker\":18446744073709551616}", "remove_worker: worker 2^64");
        add(c, "{\"op\":\"stored\",\"worker\":-1,\"blocks\":[]}", "stored: a negative worker");
        add(c, "{\"op\":\"cleared\",\"worker\":1,\"dp_rank\":-1}", "a negative dp_rank");
        add(c, "{\"op\":\"cleared\",\"worker\":1,\"dp_rank\":4294967296}", "dp_rank 2^32");
        add(c, "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":4294967296,\"blocks\":[]}", "stored: dp_rank 2^32");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,-1],\"block_size\":4}", "a negative token");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4294967296],\"block_size\":4}", "a token of 2^32");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[4294967296],\"block_size\":1,\"block_hashes\":[7]}",
                "stored: a token of 2^32");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[-7],\"block_size\":1,\"block_hashes\":[7]}",
                "stored: a negative token");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":0}", "block_size 0");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":-4}", "a negative block_size");
        add(c, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":4294967296}", "block_size 2^32");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":0,\"block_hashes\":[]}",
                "stored: block_size 0");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[],\"block_size\":-1,\"block_hashes\":[]}",
                "stored: a negative block_size");
        // --- both forms on one line
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":5}],"
                        + "\"token_ids\":[1,2,3,4],\"block_size\":4,\"block_hashes\":[101]}",
                "stored: both blocks and token_ids");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"blocks\":[],\"token_ids\":[],\"block_size\":4,\"block_hashes\":[]}",
                "stored: both forms, both empty");
        add(
                c,
                "{\"op\":\"match\",\"local_hashes\":[5],\"token_ids\":[1,2,3,4],\"block_size\":4}",
                "match: both local_hashes and token_ids");
        add(
                c,
                "{\"op\":\"match\",\"local_hashes\":[],\"token_ids\":[],\"block_size\":4}",
                "match: both forms, both empty");
        // --- token form: the number of engine hashes must equal the number of full blocks
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4],\"block_size\":4,\"block_hashes\":[]}",
                "4 tokens at block size 4 make one full block, but no engine hash (docs/SPEC.md section 7, example 9)");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4,5,6,7,8],\"block_size\":4,\"block_hashes\":[101]}",
                "two full blocks, one engine hash");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3,4,5],\"block_size\":4,\"block_hashes\":[101,102]}",
                "one full block (the tail is partial), two engine hashes");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[1,2,3],\"block_size\":4,\"block_hashes\":[101]}",
                "no full block, one engine hash");
        add(
                c,
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[],\"block_size\":1,\"block_hashes\":[101]}",
                "no tokens, one engine hash");
        return List.copyOf(c);
    }

    private static void add(List<Op.Invalid> c, String line, String why) {
        c.add(new Op.Invalid(why, line));
    }

    /** Lines that are not valid UTF-8 (each must answer {@code invalid_input}); a {@code String} cannot hold them. */
    public static List<MalformedBytes> invalidUtf8Lines() {
        String pre = "{\"op\":\"match\",\"token_ids\":[1],\"block_size\":1,\"lora_name\":\"a";
        String post = "b\"}";
        return List.of(
                new MalformedBytes(bytes(pre, post, 0xFF), "invalid UTF-8: byte 0xFF inside a string"),
                new MalformedBytes(bytes(pre, post, 0xC0, 0xAF), "invalid UTF-8: overlong encoding of '/'"),
                new MalformedBytes(bytes(pre, post, 0x80), "invalid UTF-8: a lone continuation byte"),
                new MalformedBytes(bytes(pre, post, 0xE2, 0x82), "invalid UTF-8: a truncated 3-byte sequence"),
                new MalformedBytes(bytes(pre, post, 0xED, 0xA0, 0x80), "invalid UTF-8: an encoded surrogate (CESU-8)"),
                new MalformedBytes(
                        bytes(pre, post, 0xF4, 0x90, 0x80, 0x80), "invalid UTF-8: a code point above U+10FFFF"),
                new MalformedBytes(
                        bytes("{\"op\":\"cleared\",", "\"worker\":1}", 0xFE),
                        "invalid UTF-8: byte 0xFE between members"));
    }

    private static byte[] bytes(String before, String after, int... raw) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        for (int b : raw) {
            out.write(b);
        }
        out.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    /** Valid ops that {@link #randomMalformed} breaks. */
    private static final List<Op> BREAKABLE = List.of(
            new Op.Event(KvEvent.Stored.root(Worker.of(1), new long[] {101, 102}, new long[] {5, -6})),
            new Op.Event(new KvEvent.StoredTokens(
                    Worker.of(2, 1),
                    java.util.OptionalLong.of(101),
                    new int[] {1, 2, 3, 4},
                    4,
                    new long[] {103},
                    "lora",
                    null)),
            new Op.Event(new KvEvent.Removed(Worker.of(1), new long[] {101})),
            new Op.Event(new KvEvent.Cleared(Worker.of(3))),
            new Op.Event(new KvEvent.RemoveWorker(4)),
            new Op.HashMatch(new long[] {5, -6}),
            new Op.TokenMatch(new int[] {1, 2, 3, 4}, 2, null, "ns"));

    /**
     * A malformed line chosen by {@code rnd}: mostly an entry of {@link #malformedCatalogue}, otherwise
     * a valid rendered line broken at random.
     */
    public static Op.Invalid randomMalformed(Random rnd) {
        List<Op.Invalid> catalogue = CATALOGUE;
        if (rnd.nextInt(10) < 7) {
            return catalogue.get(rnd.nextInt(catalogue.size()));
        }
        Op victim = BREAKABLE.get(rnd.nextInt(BREAKABLE.size()));
        int kind = rnd.nextInt(4);
        if (kind == 3) {
            // The plain form starts with the top-level "op" (a rendered line may carry an extra
            // field holding a nested "op" first).
            String line = OpStreamWriter.line(victim);
            return new Op.Invalid("unknown op", line.replaceFirst("\"op\":\"", "\"op\":\"X"));
        }
        String line = render(victim, rnd);
        int close = line.lastIndexOf('}');
        return switch (kind) {
            case 0 -> new Op.Invalid("a truncated line", line.substring(0, rnd.nextInt(close)));
            case 1 -> new Op.Invalid("trailing data after the object", line + " 1");
            default -> new Op.Invalid("trailing comma in an object", line.substring(0, close) + ",}");
        };
    }

    private static final List<Op.Invalid> CATALOGUE = malformedCatalogue();
}
