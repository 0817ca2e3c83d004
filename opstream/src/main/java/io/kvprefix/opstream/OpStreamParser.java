package io.kvprefix.opstream;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A strict parser for one op-stream line (docs/SPEC.md section 5): raw bytes in, a {@link ParsedOp} out.
 * Every malformed line gives {@link ParsedOp.Invalid} with a one-line reason; the parser never
 * throws for any input bytes.
 *
 * <p>The JSON grammar is RFC 8259's, hand-checked byte by byte: UTF-8 is validated (also inside
 * strings of ignored fields), numbers are read from their digits (never through {@code double},
 * never through {@code BigInteger}), and only whitespace may follow the object. One instance reuses
 * its scratch buffers from line to line; the results it returns are independent copies.
 *
 * <p>Decisions where the contract leaves room (all answered {@code invalid_input} unless said so):
 * <ul>
 *   <li>{@code -0} is a JSON integer (RFC 8259's {@code int} production allows it) with the value 0,
 *       so it is accepted wherever 0 is, also for {@code worker}, {@code dp_rank} and tokens.
 *   <li>A field the format defines ({@code op}, {@code worker}, {@code dp_rank}, {@code parent_hash},
 *       {@code blocks}, {@code token_ids}, {@code block_size}, {@code block_hashes},
 *       {@code local_hashes}, {@code lora_name}, {@code cache_namespace}, and {@code block_hash} /
 *       {@code tokens_hash} inside a block) given twice in one object is rejected: RFC 8259 leaves
 *       duplicate names unpredictable, and a router must not guess. Repeated unknown fields are
 *       ignored like any unknown field. Names are compared after unescaping ({@code "\u006fp"} is
 *       {@code op}).
 *   <li>A field that the line's op (and form) does not use is ignored like an unknown field, whatever
 *       it holds: {@code dp_rank} or {@code worker} on a {@code match}, {@code dp_rank} on
 *       {@code remove_worker}, {@code lora_name} on a hash-form line, {@code block_size} on a
 *       hash-form {@code stored}. Exceptions: the duplicate rule above, and the two-forms rule: a
 *       {@code stored} with both {@code blocks} and {@code token_ids}, or a {@code match} with both
 *       {@code local_hashes} and {@code token_ids}, is rejected as soon as both keys are present
 *       (even with a {@code null} value).
 *   <li>Unknown fields inside a {@code blocks} element are ignored too.
 *   <li>An empty {@code lora_name} / {@code cache_namespace} is the same as an absent one and comes
 *       out as null (section 2.1).
 *   <li>{@code block_size} in 2^31 .. 2^32-1 is valid but does not fit a Java {@code int}: it comes
 *       out as {@link Integer#MAX_VALUE}. A line can never carry 2^31-1 tokens, so both give zero full
 *       blocks and the same answer (a token-form {@code stored} must then have
 *       {@code "block_hashes":[]}, and a match scores nothing).
 *   <li>{@code \r} is JSON whitespace, so a line ending in {@code \r\n} parses like one ending in
 *       {@code \n}; a {@code \r} never separates lines.
 *   <li>A {@code \\u} escape that leaves a lone UTF-16 surrogate is rejected (the string would not be
 *       Unicode, and a {@code lora_name} is hashed as UTF-8).
 *   <li>Arrays and objects inside ignored values may nest at most {@value #MAX_NESTING} deep (RFC 8259
 *       section 9 allows such a limit); deeper is rejected rather than risking the stack.
 * </ul>
 *
 * <p>Thread-safety: not thread-safe (it holds per-line scratch state); use one parser per thread.
 */
public final class OpStreamParser {
    /** How deep arrays and objects may nest inside an ignored value. */
    public static final int MAX_NESTING = 512;

    // ------------------------------------------------------------------ names

    private static final int F_OP = 0,
            F_WORKER = 1,
            F_DP_RANK = 2,
            F_PARENT_HASH = 3,
            F_BLOCKS = 4,
            F_TOKEN_IDS = 5,
            F_BLOCK_SIZE = 6,
            F_BLOCK_HASHES = 7,
            F_LOCAL_HASHES = 8,
            F_LORA_NAME = 9,
            F_CACHE_NAMESPACE = 10;
    private static final String[] FIELD = {
        "op",
        "worker",
        "dp_rank",
        "parent_hash",
        "blocks",
        "token_ids",
        "block_size",
        "block_hashes",
        "local_hashes",
        "lora_name",
        "cache_namespace"
    };
    private static final byte[][] FIELD_BYTES = ascii(FIELD);

    private static final int K_BLOCK_HASH = 0, K_TOKENS_HASH = 1;
    private static final String[] BLOCK_FIELD = {"block_hash", "tokens_hash"};
    private static final byte[][] BLOCK_FIELD_BYTES = ascii(BLOCK_FIELD);

    private static final int OP_UNKNOWN = -1,
            OP_STORED = 0,
            OP_REMOVED = 1,
            OP_CLEARED = 2,
            OP_REMOVE_WORKER = 3,
            OP_MATCH = 4;
    private static final String[] OPS = {"stored", "removed", "cleared", "remove_worker", "match"};
    private static final byte[][] OP_BYTES = ascii(OPS);

    private static final byte[] TRUE = ascii("true"), FALSE = ascii("false"), NULL = ascii("null");

    private static final long U32_MAX = 0xFFFF_FFFFL;
    private static final long U64_MAX = -1L; // unsigned 2^64-1
    /** Scratch arrays that grew past this many entries are dropped after the line. */
    private static final int SHRINK_ABOVE = 1 << 20;

    private static final int V_NUMBER = 0, V_NULL = 1, V_OTHER = 2;

    // ------------------------------------------------------------------ per-line state

    private byte[] b;
    private int lineStart;
    private int pos;
    private int end;

    /** Bit {@code 1 << F_*} per defined field seen on this line, and per field given as {@code null}. */
    private int seen;

    private int nulls;
    /** The first problem with each field's value, checked only if the op uses the field. */
    private final String[] error = new String[FIELD.length];

    private int op;
    private String opText;
    private long worker;
    private long dpRank;
    private long parentHash;
    private long blockSize;
    private long[] blockE = new long[64];
    private long[] blockL = new long[64];
    private int blockCount;
    private int[] tokens = new int[1024];
    private int tokenCount;
    private long[] blockHashes = new long[64];
    private int blockHashCount;
    private long[] localHashes = new long[64];
    private int localHashCount;
    private String loraName;
    private String cacheNamespace;

    /** The last number scanned: sign, magnitude (unsigned), too big for 64 bits, has no fraction/exponent. */
    private boolean numNeg;

    private long numMag;
    private boolean numBig;
    private boolean numInt;
    private int numStart;
    /** The last converted number. */
    private long numValue;
    /** What the last non-number, non-null value was ("a string", ...). */
    private String otherType;

    /** The last string scanned: its raw content b[strStart, strEnd) when it had no escapes, else strBuf[0, strLen). */
    private int strStart;

    private int strEnd;
    private byte[] strBuf = new byte[256];
    private int strLen;
    private byte[] keyArr;
    private int keyOff;
    private int keyLen;
    private int arrayCount;
    /** The block field (K_*) being read, for messages. */
    private int blockKey;

    private final byte[] nest = new byte[MAX_NESTING];

    /** A parser with empty scratch buffers. */
    public OpStreamParser() {}

    // ------------------------------------------------------------------ entry points

    /** Parses a line given as a string (encoded as UTF-8 first; convenient in tests). */
    public ParsedOp parse(String line) {
        return parse(line.getBytes(StandardCharsets.UTF_8));
    }

    /** Parses a whole array as one line. */
    public ParsedOp parse(byte[] line) {
        return parse(line, 0, line.length);
    }

    /**
     * Parses {@code line[offset .. offset+length)}, one line without its {@code \n}. The bytes are
     * only read during the call.
     */
    public ParsedOp parse(byte[] line, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, line.length);
        b = line;
        lineStart = offset;
        pos = offset;
        end = offset + length;
        seen = 0;
        nulls = 0;
        Arrays.fill(error, null);
        op = OP_UNKNOWN;
        opText = null;
        blockCount = tokenCount = blockHashCount = localHashCount = 0;
        loraName = cacheNamespace = null;
        try {
            skipWs();
            if (pos == end) {
                return new ParsedOp.Invalid("blank line (expected one JSON object)");
            }
            if (b[pos] != '{') {
                return new ParsedOp.Invalid(notAnObject());
            }
            topObject();
            skipWs();
            if (pos != end) {
                throw unexpected(pos, "nothing but whitespace after the JSON object (trailing data)");
            }
            return build();
        } catch (Bad e) {
            return new ParsedOp.Invalid(e.getMessage());
        } finally {
            b = null;
            keyArr = null;
            shrink();
        }
    }

    private void shrink() {
        if (tokens.length > SHRINK_ABOVE) {
            tokens = new int[1024];
        }
        if (blockE.length > SHRINK_ABOVE) {
            blockE = new long[64];
            blockL = new long[64];
        }
        if (blockHashes.length > SHRINK_ABOVE) {
            blockHashes = new long[64];
        }
        if (localHashes.length > SHRINK_ABOVE) {
            localHashes = new long[64];
        }
        if (strBuf.length > SHRINK_ABOVE) {
            strBuf = new byte[256];
        }
    }

    // ------------------------------------------------------------------ building the result

    private ParsedOp build() {
        String e;
        if ((e = required(F_OP)) != null) {
            return invalid(e);
        }
        return switch (op) {
            case OP_STORED -> stored();
            case OP_REMOVED -> {
                Worker w = workerOrNull();
                if (w == null) {
                    yield workerProblem();
                }
                if ((e = required(F_BLOCK_HASHES)) != null) {
                    yield invalid(e);
                }
                yield new ParsedOp.Event(new KvEvent.Removed(w, Arrays.copyOf(blockHashes, blockHashCount)));
            }
            case OP_CLEARED -> {
                Worker w = workerOrNull();
                yield w == null ? workerProblem() : new ParsedOp.Event(new KvEvent.Cleared(w));
            }
            case OP_REMOVE_WORKER -> {
                if ((e = required(F_WORKER)) != null) {
                    yield invalid(e);
                }
                yield new ParsedOp.Event(new KvEvent.RemoveWorker(worker));
            }
            case OP_MATCH -> match();
            default ->
                invalid("unknown op \"" + printable(opText)
                        + "\" (ops are case-sensitive: stored, removed, cleared, remove_worker, match)");
        };
    }

    private ParsedOp stored() {
        Worker w = workerOrNull();
        if (w == null) {
            return workerProblem();
        }
        String e;
        if ((e = optional(F_PARENT_HASH, true)) != null) {
            return invalid(e);
        }
        OptionalLong parent =
                has(F_PARENT_HASH) && !isNull(F_PARENT_HASH) ? OptionalLong.of(parentHash) : OptionalLong.empty();
        boolean hashForm = has(F_BLOCKS);
        boolean tokenForm = has(F_TOKEN_IDS);
        if (hashForm && tokenForm) {
            return invalid("a stored line carries both forms: \"blocks\" and \"token_ids\"");
        }
        if (hashForm) {
            if ((e = required(F_BLOCKS)) != null) {
                return invalid(e);
            }
            return new ParsedOp.Event(new KvEvent.Stored(
                    w, parent, Arrays.copyOf(blockE, blockCount), Arrays.copyOf(blockL, blockCount)));
        }
        if (!tokenForm) {
            return invalid("a stored line needs \"blocks\" (hash form) or \"token_ids\" (token form)");
        }
        if ((e = required(F_TOKEN_IDS)) != null
                || (e = required(F_BLOCK_SIZE)) != null
                || (e = required(F_BLOCK_HASHES)) != null
                || (e = optional(F_LORA_NAME, true)) != null
                || (e = optional(F_CACHE_NAMESPACE, true)) != null) {
            return invalid(e);
        }
        long fullBlocks = tokenCount / blockSize;
        if (fullBlocks != blockHashCount) {
            return invalid(tokenCount + " token_ids at block_size " + blockSize + " make " + fullBlocks
                    + " full block(s), but block_hashes has " + blockHashCount);
        }
        try {
            return new ParsedOp.Event(new KvEvent.StoredTokens(
                    w,
                    parent,
                    Arrays.copyOf(tokens, tokenCount),
                    intBlockSize(),
                    Arrays.copyOf(blockHashes, blockHashCount),
                    loraName,
                    cacheNamespace));
        } catch (IllegalArgumentException ex) { // the checks above make this unreachable; never crash on it
            return invalid(ex.getMessage());
        }
    }

    private ParsedOp match() {
        boolean hashForm = has(F_LOCAL_HASHES);
        boolean tokenForm = has(F_TOKEN_IDS);
        String e;
        if (hashForm && tokenForm) {
            return invalid("a match line carries both forms: \"local_hashes\" and \"token_ids\"");
        }
        if (hashForm) {
            if ((e = required(F_LOCAL_HASHES)) != null) {
                return invalid(e);
            }
            return new ParsedOp.HashMatch(Arrays.copyOf(localHashes, localHashCount));
        }
        if (!tokenForm) {
            return invalid("a match line needs \"local_hashes\" (hash form) or \"token_ids\" (token form)");
        }
        if ((e = required(F_TOKEN_IDS)) != null
                || (e = required(F_BLOCK_SIZE)) != null
                || (e = optional(F_LORA_NAME, true)) != null
                || (e = optional(F_CACHE_NAMESPACE, true)) != null) {
            return invalid(e);
        }
        return new ParsedOp.TokenMatch(Arrays.copyOf(tokens, tokenCount), intBlockSize(), loraName, cacheNamespace);
    }

    private int intBlockSize() {
        return (int) Math.min(blockSize, Integer.MAX_VALUE);
    }

    /** The line's worker, or null if {@code worker} / {@code dp_rank} are not usable (see {@link #workerProblem}). */
    private Worker workerOrNull() {
        if (required(F_WORKER) != null || optional(F_DP_RANK, false) != null) {
            return null;
        }
        return new Worker(worker, has(F_DP_RANK) ? (int) dpRank : 0);
    }

    private ParsedOp workerProblem() {
        String e = required(F_WORKER);
        return invalid(e != null ? e : optional(F_DP_RANK, false));
    }

    private boolean has(int f) {
        return (seen & (1 << f)) != 0;
    }

    private boolean isNull(int f) {
        return (nulls & (1 << f)) != 0;
    }

    /** Null if field {@code f} is present, not null and well-formed; otherwise why not. */
    private String required(int f) {
        if (!has(f)) {
            return "required field \"" + FIELD[f] + "\" is missing";
        }
        if (isNull(f)) {
            return "required field \"" + FIELD[f] + "\" is null";
        }
        return error[f];
    }

    /** Null if field {@code f} is absent, or null where allowed, or well-formed; otherwise why not. */
    private String optional(int f, boolean nullAllowed) {
        if (!has(f)) {
            return null;
        }
        if (isNull(f)) {
            return nullAllowed ? null : "field \"" + FIELD[f] + "\" is null (leave it out instead)";
        }
        return error[f];
    }

    private static ParsedOp invalid(String reason) {
        return new ParsedOp.Invalid(reason);
    }

    // ------------------------------------------------------------------ objects

    private void topObject() {
        pos++; // '{'
        skipWs();
        if (peek("a field name or '}'") == '}') {
            pos++;
            return;
        }
        while (true) {
            int keyAt = pos;
            key();
            int f = find(FIELD_BYTES);
            colon();
            if (f < 0) {
                skipValue();
            } else {
                if (has(f)) {
                    throw bad(keyAt, "field \"" + FIELD[f] + "\" appears twice");
                }
                seen |= 1 << f;
                field(f);
            }
            skipWs();
            int c = next("',' or '}'");
            if (c == '}') {
                return;
            }
            if (c != ',') {
                throw unexpected(pos - 1, "',' or '}' after a field");
            }
            skipWs();
            peek("a field name");
        }
    }

    private void field(int f) {
        switch (f) {
            case F_OP -> opField();
            case F_WORKER -> {
                if (scalar(f) && toUnsigned(f, -1, U64_MAX, 0)) {
                    worker = numValue;
                }
            }
            case F_DP_RANK -> {
                if (scalar(f) && toUnsigned(f, -1, U32_MAX, 0)) {
                    dpRank = numValue;
                }
            }
            case F_PARENT_HASH -> {
                if (scalar(f) && toHash(f, -1)) {
                    parentHash = numValue;
                }
            }
            case F_BLOCK_SIZE -> {
                if (scalar(f) && toUnsigned(f, -1, U32_MAX, 1)) {
                    blockSize = numValue;
                }
            }
            case F_BLOCKS -> blocks();
            case F_TOKEN_IDS -> tokenArray();
            case F_BLOCK_HASHES -> {
                blockHashes = hashArray(f, blockHashes);
                blockHashCount = arrayCount;
            }
            case F_LOCAL_HASHES -> {
                localHashes = hashArray(f, localHashes);
                localHashCount = arrayCount;
            }
            case F_LORA_NAME -> loraName = stringField(f);
            case F_CACHE_NAMESPACE -> cacheNamespace = stringField(f);
            default -> throw new IllegalStateException("field " + f);
        }
    }

    private void opField() {
        int c = b[pos];
        if (c == '"') {
            boolean raw = string(true);
            byte[] src = raw ? b : strBuf;
            int off = raw ? strStart : 0;
            int len = raw ? strEnd - strStart : strLen;
            op = OP_UNKNOWN;
            for (int i = 0; i < OP_BYTES.length; i++) {
                if (Arrays.equals(src, off, off + len, OP_BYTES[i], 0, OP_BYTES[i].length)) {
                    op = i;
                    return;
                }
            }
            opText = new String(src, off, len, StandardCharsets.UTF_8);
            return;
        }
        int kind = valueKind();
        if (kind == V_NULL) {
            nulls |= 1 << F_OP;
        } else {
            error[F_OP] = "op must be a string, got " + (kind == V_NUMBER ? "a number" : otherType);
        }
    }

    /** A string field that may be null; returns the value with "" as null. */
    private String stringField(int f) {
        int c = b[pos];
        if (c == '"') {
            String s = string(true)
                    ? new String(b, strStart, strEnd - strStart, StandardCharsets.UTF_8)
                    : new String(strBuf, 0, strLen, StandardCharsets.UTF_8);
            return s.isEmpty() ? null : s;
        }
        int kind = valueKind();
        if (kind == V_NULL) {
            nulls |= 1 << f;
        } else if (error[f] == null) {
            error[f] = FIELD[f] + " must be a string, got " + (kind == V_NUMBER ? "a number" : otherType);
        }
        return null;
    }

    private void blocks() {
        blockCount = 0;
        if (!arrayStart(F_BLOCKS)) {
            return;
        }
        int n = 0;
        while (true) {
            if (n == blockE.length) {
                blockE = Arrays.copyOf(blockE, n * 2);
                blockL = Arrays.copyOf(blockL, n * 2);
            }
            if (b[pos] == '{') {
                blockObject(n);
            } else {
                int kind = valueKind();
                if (error[F_BLOCKS] == null) {
                    error[F_BLOCKS] = "blocks[" + n + "] must be an object {\"block_hash\":E,\"tokens_hash\":L}, got "
                            + (kind == V_NUMBER ? "a number" : kind == V_NULL ? "null" : otherType);
                }
            }
            n++;
            if (!arrayNext()) {
                break;
            }
        }
        blockCount = n;
    }

    private void blockObject(int i) {
        pos++; // '{'
        skipWs();
        int got = 0;
        if (peek("a field name or '}'") == '}') {
            pos++;
        } else {
            while (true) {
                int keyAt = pos;
                key();
                int k = find(BLOCK_FIELD_BYTES);
                colon();
                if (k < 0) {
                    skipValue();
                } else {
                    if ((got & (1 << k)) != 0) {
                        throw bad(keyAt, "field \"blocks[" + i + "]." + BLOCK_FIELD[k] + "\" appears twice");
                    }
                    got |= 1 << k;
                    int kind = valueKind();
                    blockKey = k;
                    if (kind == V_NUMBER) {
                        if (toHash(F_BLOCKS, i)) {
                            (k == K_BLOCK_HASH ? blockE : blockL)[i] = numValue;
                        }
                    } else if (error[F_BLOCKS] == null) {
                        error[F_BLOCKS] = "blocks[" + i + "]." + BLOCK_FIELD[k]
                                + (kind == V_NULL ? " is null" : " must be an integer, got " + otherType);
                    }
                }
                skipWs();
                int c = next("',' or '}'");
                if (c == '}') {
                    break;
                }
                if (c != ',') {
                    throw unexpected(pos - 1, "',' or '}' after a field");
                }
                skipWs();
                peek("a field name");
            }
        }
        if (got != 3 && error[F_BLOCKS] == null) {
            error[F_BLOCKS] =
                    "blocks[" + i + "] lacks \"" + BLOCK_FIELD[(got & 1) == 0 ? K_BLOCK_HASH : K_TOKENS_HASH] + "\"";
        }
    }

    /** Reads an object key at pos (which must be a '"') into keyArr/keyOff/keyLen. */
    private void key() {
        if (b[pos] != '"') {
            throw keyExpected();
        }
        if (string(true)) {
            keyArr = b;
            keyOff = strStart;
            keyLen = strEnd - strStart;
        } else {
            keyArr = strBuf;
            keyOff = 0;
            keyLen = strLen;
        }
    }

    private int find(byte[][] names) {
        for (int i = 0; i < names.length; i++) {
            byte[] n = names[i];
            if (n.length == keyLen && Arrays.equals(keyArr, keyOff, keyOff + keyLen, n, 0, n.length)) {
                return i;
            }
        }
        return -1;
    }

    private void colon() {
        skipWs();
        int c = next("':'");
        if (c != ':') {
            throw unexpected(pos - 1, "':' after a field name");
        }
        skipWs();
        peek("a value");
    }

    private Bad keyExpected() {
        int c = b[pos];
        if (c == '}') {
            return bad(pos, "expected a field name, found '}' (a trailing comma is not JSON)");
        }
        if (c == '\'') {
            return bad(pos, "field names need double quotes (single quotes are not JSON)");
        }
        if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$') {
            return bad(pos, "field names must be double-quoted strings (unquoted names are not JSON)");
        }
        return unexpected(pos, "a field name");
    }

    // ------------------------------------------------------------------ arrays

    /**
     * At a value expected to be an array: true if a non-empty array was opened (pos at its first
     * element); false for an empty array (consumed), null (consumed, marked) or another type
     * (skipped, error recorded). Sets arrayCount to 0.
     */
    private boolean arrayStart(int f) {
        arrayCount = 0;
        if (b[pos] == '[') {
            pos++;
            skipWs();
            if (peek("an array element or ']'") == ']') {
                pos++;
                return false;
            }
            return true;
        }
        int kind = valueKind();
        if (kind == V_NULL) {
            nulls |= 1 << f;
        } else if (error[f] == null) {
            error[f] = FIELD[f] + " must be an array, got " + (kind == V_NUMBER ? "a number" : otherType);
        }
        return false;
    }

    /** After an element: true if a ',' follows (pos at the next element), false at ']' (consumed). */
    private boolean arrayNext() {
        skipWs();
        int c = next("',' or ']'");
        if (c == ',') {
            skipWs();
            peek("an array element");
            return true;
        }
        if (c == ']') {
            return false;
        }
        throw unexpected(pos - 1, "',' or ']' in an array");
    }

    private long[] hashArray(int f, long[] buf) {
        if (!arrayStart(f)) {
            return buf;
        }
        int n = 0;
        while (true) {
            if (n == buf.length) {
                buf = Arrays.copyOf(buf, n * 2);
            }
            int kind = valueKind();
            if (kind == V_NUMBER) {
                if (toHash(f, n)) {
                    buf[n] = numValue;
                }
            } else if (error[f] == null) {
                error[f] = FIELD[f] + "[" + n + "] must be an integer, got " + (kind == V_NULL ? "null" : otherType);
            }
            n++;
            if (!arrayNext()) {
                break;
            }
        }
        arrayCount = n;
        return buf;
    }

    private void tokenArray() {
        tokenCount = 0;
        if (!arrayStart(F_TOKEN_IDS)) {
            return;
        }
        int[] buf = tokens;
        int n = 0;
        while (true) {
            if (n == buf.length) {
                buf = Arrays.copyOf(buf, n * 2);
                tokens = buf;
            }
            int c = b[pos];
            if (c >= '0' && c <= '9') { // the common case: a small non-negative integer
                scanNumber();
                if (numInt && !numBig && (numMag >>> 32) == 0) {
                    buf[n] = (int) numMag;
                } else if (toUnsigned(F_TOKEN_IDS, n, U32_MAX, 0)) {
                    buf[n] = (int) numValue;
                }
            } else {
                int kind = valueKind();
                if (kind == V_NUMBER) {
                    if (toUnsigned(F_TOKEN_IDS, n, U32_MAX, 0)) {
                        buf[n] = (int) numValue;
                    }
                } else if (error[F_TOKEN_IDS] == null) {
                    error[F_TOKEN_IDS] =
                            "token_ids[" + n + "] must be an integer, got " + (kind == V_NULL ? "null" : otherType);
                }
            }
            n++;
            if (!arrayNext()) {
                break;
            }
        }
        tokenCount = n;
    }

    // ------------------------------------------------------------------ scalars

    /** A number-typed field at pos: true if a number was scanned; null is marked; other types recorded. */
    private boolean scalar(int f) {
        int kind = valueKind();
        if (kind == V_NUMBER) {
            return true;
        }
        if (kind == V_NULL) {
            nulls |= 1 << f;
        } else if (error[f] == null) {
            error[f] = FIELD[f] + " must be an integer, got " + otherType;
        }
        return false;
    }

    /**
     * Consumes the value at pos: a number is scanned (V_NUMBER), null consumed (V_NULL), anything
     * else checked and skipped with its type in otherType (V_OTHER). Malformed JSON throws.
     */
    private int valueKind() {
        int c = b[pos];
        if (c == '-' || c >= '0' && c <= '9') {
            scanNumber();
            return V_NUMBER;
        }
        if (c == 'n') {
            literal(NULL);
            return V_NULL;
        }
        otherType = switch (c) {
            case '"' -> "a string";
            case 't', 'f' -> "a boolean";
            case '[' -> "an array";
            case '{' -> "an object";
            default -> null;
        };
        skipValue(); // throws for anything that is not a JSON value
        return V_OTHER;
    }

    /** The scanned number as 64 hash bits (negative values as two's complement), or records why not. */
    private boolean toHash(int f, int index) {
        if (numInt && !numBig && (!numNeg || Long.compareUnsigned(numMag, Long.MIN_VALUE) <= 0)) {
            numValue = numNeg ? -numMag : numMag;
            return true;
        }
        if (error[f] == null) {
            error[f] = label(f, index)
                    + (numInt
                            ? " is outside the hash range -9223372036854775808..18446744073709551615: "
                            : " must be an integer, got ")
                    + numberText();
        }
        return false;
    }

    /** The scanned number as an unsigned value in {@code min .. max}, or records why not. */
    private boolean toUnsigned(int f, int index, long max, long min) {
        boolean negative = numNeg && numMag != 0; // -0 is 0
        if (numInt
                && !numBig
                && !negative
                && Long.compareUnsigned(numMag, max) <= 0
                && Long.compareUnsigned(numMag, min) >= 0) {
            numValue = numMag;
            return true;
        }
        if (error[f] == null) {
            String what = !numInt
                    ? " must be an integer, got "
                    : " is outside " + min + ".." + Long.toUnsignedString(max) + ": ";
            error[f] = label(f, index) + what + numberText();
        }
        return false;
    }

    private String label(int f, int index) {
        return index < 0
                ? FIELD[f]
                : f == F_BLOCKS ? "blocks[" + index + "]." + BLOCK_FIELD[blockKey] : FIELD[f] + "[" + index + "]";
    }

    private String numberText() {
        int n = pos - numStart;
        return n <= 48
                ? new String(b, numStart, n, StandardCharsets.ISO_8859_1)
                : new String(b, numStart, 45, StandardCharsets.ISO_8859_1) + "...";
    }

    /** Scans a JSON number at pos into numNeg/numMag/numBig/numInt. */
    private void scanNumber() {
        numStart = pos;
        boolean neg = false;
        if (b[pos] == '-') {
            neg = true;
            pos++;
            if (pos == end || b[pos] < '0' || b[pos] > '9') {
                if (pos < end && b[pos] == 'I') {
                    throw bad(numStart, "-Infinity is not JSON");
                }
                throw bad(numStart, "'-' must be followed by a digit");
            }
        }
        long mag = 0;
        boolean big = false;
        if (b[pos] == '0') {
            pos++;
            if (pos < end && b[pos] >= '0' && b[pos] <= '9') {
                throw bad(numStart, "numbers with leading zeros are not JSON");
            }
        } else {
            int digits = 0;
            int p = pos;
            while (p < end) {
                int d = b[p] - '0';
                if (d < 0 || d > 9) {
                    break;
                }
                if (digits < 19) { // 19 digits stay below 2^64: exact as an unsigned long
                    mag = mag * 10 + d;
                } else if (digits == 19
                        && (Long.compareUnsigned(mag, 1844674407370955161L) < 0
                                || mag == 1844674407370955161L && d <= 5)) {
                    mag = mag * 10 + d; // at most 18446744073709551615
                } else {
                    big = true;
                }
                digits++;
                p++;
            }
            pos = p;
        }
        boolean integer = true;
        if (pos < end && b[pos] == '.') {
            pos++;
            if (skipDigits() == 0) {
                throw bad(pos, "a '.' in a number must be followed by a digit");
            }
            integer = false;
        }
        if (pos < end && (b[pos] == 'e' || b[pos] == 'E')) {
            pos++;
            if (pos < end && (b[pos] == '+' || b[pos] == '-')) {
                pos++;
            }
            if (skipDigits() == 0) {
                throw bad(pos, "an exponent must have digits");
            }
            integer = false;
        }
        numNeg = neg;
        numMag = mag;
        numBig = big;
        numInt = integer;
    }

    private int skipDigits() {
        int p = pos;
        while (p < end && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
        int n = p - pos;
        pos = p;
        return n;
    }

    private void literal(byte[] word) {
        if (end - pos >= word.length && Arrays.equals(b, pos, pos + word.length, word, 0, word.length)) {
            pos += word.length;
            return;
        }
        throw bad(pos, "invalid literal (JSON has only true, false and null, in lower case)");
    }

    // ------------------------------------------------------------------ strings

    /**
     * Checks the string starting at pos (the opening quote) and moves past its closing quote.
     * Returns true if it had no escapes: its content is then b[strStart, strEnd). Otherwise returns
     * false and, if {@code decode}, the unescaped UTF-8 content is in strBuf[0, strLen).
     */
    private boolean string(boolean decode) {
        int open = pos;
        int p = pos + 1;
        while (true) { // fast path: plain ASCII
            if (p >= end) {
                throw bad(open, "unterminated string");
            }
            int c = b[p];
            if (c == '"') {
                strStart = open + 1;
                strEnd = p;
                pos = p + 1;
                return true;
            }
            if (c == '\\' || c < 0x20) { // negative bytes (>= 0x80) are below 0x20 too
                break;
            }
            p++;
        }
        int n = 0;
        if (decode) {
            n = p - (open + 1);
            ensureStrBuf(n + 16);
            System.arraycopy(b, open + 1, strBuf, 0, n);
        }
        boolean escaped = false;
        while (true) {
            if (p >= end) {
                throw bad(open, "unterminated string");
            }
            int c = b[p] & 0xFF;
            if (decode) {
                ensureStrBuf(n + 4);
            }
            if (c == '"') {
                pos = p + 1;
                if (!escaped) {
                    strStart = open + 1;
                    strEnd = p;
                    return true;
                }
                strLen = n;
                return false;
            }
            if (c == '\\') {
                escaped = true;
                if (p + 1 >= end) {
                    throw bad(open, "unterminated string");
                }
                int e = b[p + 1];
                int out = switch (e) {
                    case '"' -> '"';
                    case '\\' -> '\\';
                    case '/' -> '/';
                    case 'b' -> '\b';
                    case 'f' -> '\f';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    case 't' -> '\t';
                    case 'u' -> -1;
                    default ->
                        throw bad(
                                p,
                                "invalid escape in a string (JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
                };
                if (out >= 0) {
                    if (decode) {
                        strBuf[n++] = (byte) out;
                    }
                    p += 2;
                    continue;
                }
                int cp = hex4(p + 2);
                int at = p;
                p += 6;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    int lo = p + 1 < end && b[p] == '\\' && b[p + 1] == 'u' ? hex4(p + 2) : -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        throw bad(at, "unpaired UTF-16 surrogate escape in a string");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    throw bad(at, "unpaired UTF-16 surrogate escape in a string");
                }
                if (decode) {
                    n = appendUtf8(n, cp);
                }
                continue;
            }
            if (c < 0x20) {
                throw bad(p, "control character " + hexByte(c) + " in a string (it must be escaped)");
            }
            if (c < 0x80) {
                if (decode) {
                    strBuf[n++] = (byte) c;
                }
                p++;
                continue;
            }
            int len = utf8Length(p);
            if (len < 0) {
                throw bad(p, "invalid UTF-8");
            }
            if (decode) {
                System.arraycopy(b, p, strBuf, n, len);
                n += len;
            }
            p += len;
        }
    }

    /** Length of the valid UTF-8 sequence at p (2..4), or -1 (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
    private int utf8Length(int p) {
        int c = b[p] & 0xFF;
        int more;
        int lo = 0x80;
        int hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c == 0xE0) {
            more = 2;
            lo = 0xA0;
        } else if (c >= 0xE1 && c <= 0xEC || c == 0xEE || c == 0xEF) {
            more = 2;
        } else if (c == 0xED) {
            more = 2;
            hi = 0x9F;
        } else if (c == 0xF0) {
            more = 3;
            lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3) {
            more = 3;
        } else if (c == 0xF4) {
            more = 3;
            hi = 0x8F;
        } else {
            return -1;
        }
        if (p + more >= end) {
            return -1;
        }
        int c1 = b[p + 1] & 0xFF;
        if (c1 < lo || c1 > hi) {
            return -1;
        }
        for (int k = 2; k <= more; k++) {
            int ck = b[p + k] & 0xFF;
            if (ck < 0x80 || ck > 0xBF) {
                return -1;
            }
        }
        return more + 1;
    }

    private int hex4(int p) {
        if (p + 4 > end) {
            throw bad(p - 2, "truncated \\u escape in a string");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int c = b[p + i];
            int d = c >= '0' && c <= '9'
                    ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) {
                throw bad(p - 2, "a \\u escape needs 4 hex digits");
            }
            v = v << 4 | d;
        }
        return v;
    }

    private int appendUtf8(int n, int cp) {
        if (cp < 0x80) {
            strBuf[n++] = (byte) cp;
        } else if (cp < 0x800) {
            strBuf[n++] = (byte) (0xC0 | cp >> 6);
            strBuf[n++] = (byte) (0x80 | cp & 0x3F);
        } else if (cp < 0x10000) {
            strBuf[n++] = (byte) (0xE0 | cp >> 12);
            strBuf[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
            strBuf[n++] = (byte) (0x80 | cp & 0x3F);
        } else {
            strBuf[n++] = (byte) (0xF0 | cp >> 18);
            strBuf[n++] = (byte) (0x80 | cp >> 12 & 0x3F);
            strBuf[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
            strBuf[n++] = (byte) (0x80 | cp & 0x3F);
        }
        return n;
    }

    private void ensureStrBuf(int n) {
        if (n > strBuf.length) {
            strBuf = Arrays.copyOf(strBuf, Math.max(n, strBuf.length * 2));
        }
    }

    // ------------------------------------------------------------------ skipping ignored values

    /** Checks and skips the JSON value at pos, iteratively (nesting up to {@link #MAX_NESTING}). */
    private void skipValue() {
        int depth = 0;
        while (true) {
            int c = b[pos];
            if (c == '{' || c == '[') {
                if (depth == MAX_NESTING) {
                    throw bad(pos, "arrays and objects nest deeper than " + MAX_NESTING);
                }
                byte close = (byte) (c == '{' ? '}' : ']');
                nest[depth++] = close;
                pos++;
                skipWs();
                if (peek(c == '{' ? "a field name or '}'" : "a value or ']'") == close) {
                    pos++;
                    depth--;
                } else {
                    if (c == '{') {
                        key();
                        colon();
                    }
                    continue; // at the first member's value
                }
            } else if (c == '"') {
                string(false);
            } else if (c == '-' || c >= '0' && c <= '9') {
                scanNumber();
            } else if (c == 't') {
                literal(TRUE);
            } else if (c == 'f') {
                literal(FALSE);
            } else if (c == 'n') {
                literal(NULL);
            } else {
                throw unexpected(pos, "a value");
            }
            // a complete value: close containers or move to the next member
            while (true) {
                if (depth == 0) {
                    return;
                }
                skipWs();
                byte close = nest[depth - 1];
                int d = next(close == '}' ? "',' or '}'" : "',' or ']'");
                if (d == close) {
                    depth--;
                    continue;
                }
                if (d != ',') {
                    throw unexpected(pos - 1, close == '}' ? "',' or '}' in an object" : "',' or ']' in an array");
                }
                skipWs();
                if (close == '}') {
                    peek("a field name");
                    key();
                    colon();
                } else {
                    peek("a value");
                }
                break;
            }
        }
    }

    // ------------------------------------------------------------------ low level

    private void skipWs() {
        int p = pos;
        while (p < end) {
            int c = b[p];
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                break;
            }
            p++;
        }
        pos = p;
    }

    /** The byte at pos (not consumed); throws if the line ends here. */
    private int peek(String expected) {
        if (pos >= end) {
            throw bad(pos, "the line ends where " + expected + " was expected (truncated?)");
        }
        return b[pos];
    }

    /** The byte at pos, consumed; throws if the line ends here. */
    private int next(String expected) {
        int c = peek(expected);
        pos++;
        return c;
    }

    private String notAnObject() {
        int c = b[pos];
        String what = switch (c) {
            case '[' -> "an array";
            case '"' -> "a string";
            case 't' -> startsWith(pos, "true") ? "a boolean" : null;
            case 'f' -> startsWith(pos, "false") ? "a boolean" : null;
            case 'n' -> startsWith(pos, "null") ? "null" : null;
            default ->
                c == '-' && pos + 1 < end && b[pos + 1] >= '0' && b[pos + 1] <= '9' || c >= '0' && c <= '9'
                        ? "a number"
                        : null;
        };
        if (what != null) {
            return "the line must be a JSON object, but it starts with " + what;
        }
        return unexpected(pos, "a JSON object '{'").getMessage();
    }

    /** An error for the unexpected byte at p, with a hint for the usual non-JSON habits. */
    private Bad unexpected(int p, String expected) {
        int c = b[p] & 0xFF;
        if (c >= 0x80) {
            int len = utf8Length(p);
            if (len < 0) {
                return bad(p, "invalid UTF-8");
            }
            int cp = new String(b, p, len, StandardCharsets.UTF_8).codePointAt(0);
            return bad(p, "expected " + expected + ", found U+" + String.format("%04X", cp));
        }
        String hint = "";
        if (c == '\'') {
            hint = " (single quotes are not JSON)";
        } else if (c == '/' || c == '#') {
            hint = " (comments are not JSON)";
        } else if (startsWith(p, "NaN") || startsWith(p, "Infinity")) {
            hint = " (NaN and Infinity are not JSON)";
        } else if (c == '+') {
            hint = " (a leading '+' is not JSON)";
        } else if (c == '.') {
            hint = " (a number must start with a digit)";
        } else if (c == '}' || c == ']') {
            int q = p - 1;
            while (q >= lineStart && (b[q] == ' ' || b[q] == '\t' || b[q] == '\r')) {
                q--;
            }
            if (q >= lineStart && b[q] == ',') {
                hint = " (a trailing comma is not JSON)";
            }
        }
        String found = c >= 0x20 && c < 0x7F ? "'" + (char) c + "'" : hexByte(c);
        return bad(p, "expected " + expected + ", found " + found + hint);
    }

    private boolean startsWith(int p, String word) {
        byte[] w = ascii(word);
        return end - p >= w.length && Arrays.equals(b, p, p + w.length, w, 0, w.length);
    }

    private static String hexByte(int c) {
        return String.format("byte 0x%02X", c);
    }

    private Bad bad(int p, String message) {
        return new Bad("column " + (p - lineStart + 1) + ": " + message);
    }

    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        s.codePoints().limit(64).forEach(cp -> {
            if (cp < 0x20 || cp == 0x7F) {
                sb.append(String.format("\\u%04x", cp));
            } else {
                sb.appendCodePoint(cp);
            }
        });
        return s.codePointCount(0, s.length()) > 64 ? sb + "..." : sb.toString();
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[][] ascii(String[] names) {
        byte[][] out = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            out[i] = ascii(names[i]);
        }
        return out;
    }

    /** A malformed line; carries only its message (no stack trace: it is control flow, not a bug). */
    private static final class Bad extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Bad(String message) {
            super(message, null, false, false);
        }
    }
}
