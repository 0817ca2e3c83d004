package io.kvprefix.opstream.internal;

import static io.kvprefix.opstream.internal.LineFields.*;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads the top-level object of one op-stream line into a {@link LineFields}: each defined field
 * is recognised by name, its value checked against the type and range the format gives it
 * (docs/SPEC.md section 5) and stored, or its first problem recorded against the field; unknown
 * fields are checked as JSON and skipped. Problems with the JSON itself, and a defined field given
 * twice, throw {@link JsonLexer.Malformed}.
 *
 * <p>Thread-safety: not thread-safe; one reader per {@link LineFields}.
 */
final class FieldReader {
    private static final byte[][] FIELD_BYTES = ascii(FIELD);

    private static final int K_BLOCK_HASH = 0, K_TOKENS_HASH = 1;
    private static final String[] BLOCK_FIELD = {"block_hash", "tokens_hash"};
    private static final byte[][] BLOCK_FIELD_BYTES = ascii(BLOCK_FIELD);

    private static final String[] OPS = {"stored", "removed", "cleared", "remove_worker", "match", "explain", "copied"};
    private static final byte[][] OP_BYTES = ascii(OPS);

    private static final long U32_MAX = 0xFFFF_FFFFL;
    private static final long U64_MAX = -1L; // unsigned 2^64-1

    private final LineFields v;
    private final JsonLexer lex;

    /** The last converted number. */
    private long numValue;

    private int arrayCount;
    /** The block field (K_*) being read, for messages. */
    private int blockKey;

    FieldReader(LineFields values, JsonLexer lex) {
        this.v = values;
        this.lex = lex;
    }

    /** Reads the object at pos (its '{') up to and including its '}'. */
    void topObject() {
        lex.pos++; // '{'
        lex.skipWs();
        if (lex.peek("a field name or '}'") == '}') {
            lex.pos++;
            return;
        }
        while (true) {
            int keyAt = lex.pos;
            lex.key();
            int f = lex.find(FIELD_BYTES);
            lex.colon();
            if (f < 0) {
                lex.skipValue();
            } else {
                if (v.has(f)) {
                    throw lex.bad(keyAt, "field \"" + FIELD[f] + "\" appears twice");
                }
                v.seen |= 1 << f;
                field(f);
            }
            lex.skipWs();
            int c = lex.next("',' or '}'");
            if (c == '}') {
                return;
            }
            if (c != ',') {
                throw lex.unexpected(lex.pos - 1, "',' or '}' after a field");
            }
            lex.skipWs();
            lex.peek("a field name");
        }
    }

    private void field(int f) {
        switch (f) {
            case F_OP -> opField();
            case F_WORKER -> {
                if (scalar(f) && toUnsigned(f, -1, U64_MAX, 0)) {
                    v.worker = numValue;
                }
            }
            case F_DP_RANK -> {
                if (scalar(f) && toUnsigned(f, -1, U32_MAX, 0)) {
                    v.dpRank = numValue;
                }
            }
            case F_PARENT_HASH -> {
                if (scalar(f) && toHash(f, -1)) {
                    v.parentHash = numValue;
                }
            }
            case F_BLOCK_SIZE -> {
                if (scalar(f) && toUnsigned(f, -1, U32_MAX, 1)) {
                    v.blockSize = numValue;
                }
            }
            case F_BLOCKS -> blocks();
            case F_TOKEN_IDS -> tokenArray();
            case F_BLOCK_HASHES -> {
                v.blockHashes = hashArray(f, v.blockHashes);
                v.blockHashCount = arrayCount;
            }
            case F_LOCAL_HASHES -> {
                v.localHashes = hashArray(f, v.localHashes);
                v.localHashCount = arrayCount;
            }
            case F_LORA_NAME -> v.loraName = stringField(f);
            case F_CACHE_NAMESPACE -> v.cacheNamespace = stringField(f);
            case F_MM -> mmArray();
            case F_MEDIUM -> v.medium = stringField(f);
            default -> throw new IllegalStateException("field " + f);
        }
    }

    private void opField() {
        int c = lex.b[lex.pos];
        if (c == '"') {
            boolean raw = lex.string(true);
            byte[] src = raw ? lex.b : lex.strBuf;
            int off = raw ? lex.strStart : 0;
            int len = raw ? lex.strEnd - lex.strStart : lex.strLen;
            v.op = OP_UNKNOWN;
            for (int i = 0; i < OP_BYTES.length; i++) {
                if (Arrays.equals(src, off, off + len, OP_BYTES[i], 0, OP_BYTES[i].length)) {
                    v.op = i;
                    return;
                }
            }
            v.opText = new String(src, off, len, StandardCharsets.UTF_8);
            return;
        }
        int kind = lex.valueKind();
        if (kind == JsonLexer.V_NULL) {
            v.nulls |= 1 << F_OP;
        } else {
            v.error[F_OP] = "op must be a string, got " + (kind == JsonLexer.V_NUMBER ? "a number" : lex.otherType);
        }
    }

    /** A string field that may be null; returns the value with "" as null. */
    private String stringField(int f) {
        int c = lex.b[lex.pos];
        if (c == '"') {
            String s = lex.string(true)
                    ? new String(lex.b, lex.strStart, lex.strEnd - lex.strStart, StandardCharsets.UTF_8)
                    : new String(lex.strBuf, 0, lex.strLen, StandardCharsets.UTF_8);
            return s.isEmpty() ? null : s;
        }
        int kind = lex.valueKind();
        if (kind == JsonLexer.V_NULL) {
            v.nulls |= 1 << f;
        } else if (v.error[f] == null) {
            v.error[f] =
                    FIELD[f] + " must be a string, got " + (kind == JsonLexer.V_NUMBER ? "a number" : lex.otherType);
        }
        return null;
    }

    private void blocks() {
        v.blockCount = 0;
        if (!arrayStart(F_BLOCKS)) {
            return;
        }
        int n = 0;
        while (true) {
            if (n == v.blockE.length) {
                v.blockE = Arrays.copyOf(v.blockE, n * 2);
                v.blockL = Arrays.copyOf(v.blockL, n * 2);
            }
            if (lex.b[lex.pos] == '{') {
                blockObject(n);
            } else {
                int kind = lex.valueKind();
                if (v.error[F_BLOCKS] == null) {
                    v.error[F_BLOCKS] = "blocks[" + n + "] must be an object {\"block_hash\":E,\"tokens_hash\":L}, got "
                            + (kind == JsonLexer.V_NUMBER
                                    ? "a number"
                                    : kind == JsonLexer.V_NULL ? "null" : lex.otherType);
                }
            }
            n++;
            if (!lex.arrayNext()) {
                break;
            }
        }
        v.blockCount = n;
    }

    private void blockObject(int i) {
        lex.pos++; // '{'
        lex.skipWs();
        int got = 0;
        if (lex.peek("a field name or '}'") == '}') {
            lex.pos++;
        } else {
            while (true) {
                int keyAt = lex.pos;
                lex.key();
                int k = lex.find(BLOCK_FIELD_BYTES);
                lex.colon();
                if (k < 0) {
                    lex.skipValue();
                } else {
                    if ((got & (1 << k)) != 0) {
                        throw lex.bad(keyAt, "field \"blocks[" + i + "]." + BLOCK_FIELD[k] + "\" appears twice");
                    }
                    got |= 1 << k;
                    int kind = lex.valueKind();
                    blockKey = k;
                    if (kind == JsonLexer.V_NUMBER) {
                        if (toHash(F_BLOCKS, i)) {
                            (k == K_BLOCK_HASH ? v.blockE : v.blockL)[i] = numValue;
                        }
                    } else if (v.error[F_BLOCKS] == null) {
                        v.error[F_BLOCKS] = "blocks[" + i + "]." + BLOCK_FIELD[k]
                                + (kind == JsonLexer.V_NULL ? " is null" : " must be an integer, got " + lex.otherType);
                    }
                }
                lex.skipWs();
                int c = lex.next("',' or '}'");
                if (c == '}') {
                    break;
                }
                if (c != ',') {
                    throw lex.unexpected(lex.pos - 1, "',' or '}' after a field");
                }
                lex.skipWs();
                lex.peek("a field name");
            }
        }
        if (got != 3 && v.error[F_BLOCKS] == null) {
            v.error[F_BLOCKS] =
                    "blocks[" + i + "] lacks \"" + BLOCK_FIELD[(got & 1) == 0 ? K_BLOCK_HASH : K_TOKENS_HASH] + "\"";
        }
    }

    // ------------------------------------------------------------------ arrays

    /**
     * At a value expected to be an array: true if a non-empty array was opened (pos at its first
     * element); false for an empty array (consumed), null (consumed, marked) or another type
     * (skipped, error recorded). Sets arrayCount to 0.
     */
    private boolean arrayStart(int f) {
        arrayCount = 0;
        if (lex.b[lex.pos] == '[') {
            lex.pos++;
            lex.skipWs();
            if (lex.peek("an array element or ']'") == ']') {
                lex.pos++;
                return false;
            }
            return true;
        }
        int kind = lex.valueKind();
        if (kind == JsonLexer.V_NULL) {
            v.nulls |= 1 << f;
        } else if (v.error[f] == null) {
            v.error[f] =
                    FIELD[f] + " must be an array, got " + (kind == JsonLexer.V_NUMBER ? "a number" : lex.otherType);
        }
        return false;
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
            int kind = lex.valueKind();
            if (kind == JsonLexer.V_NUMBER) {
                if (toHash(f, n)) {
                    buf[n] = numValue;
                }
            } else if (v.error[f] == null) {
                v.error[f] = FIELD[f] + "[" + n + "] must be an integer, got "
                        + (kind == JsonLexer.V_NULL ? "null" : lex.otherType);
            }
            n++;
            if (!lex.arrayNext()) {
                break;
            }
        }
        arrayCount = n;
        return buf;
    }

    /**
     * {@code mm}: an array of {@code [START, END, MM_HASH]} triples, START and END token offsets
     * (0 .. 2^31-1, START below END), MM_HASH a hash (docs/SPEC.md section 5).
     */
    private void mmArray() {
        v.mmCount = 0;
        if (!arrayStart(F_MM)) {
            return;
        }
        int n = 0;
        while (true) {
            if (3 * n + 3 > v.mm.length) {
                v.mm = Arrays.copyOf(v.mm, v.mm.length * 2);
            }
            mmItem(n);
            n++;
            if (!lex.arrayNext()) {
                break;
            }
        }
        v.mmCount = n;
    }

    private void mmItem(int i) {
        if (lex.b[lex.pos] != '[') {
            int kind = lex.valueKind();
            mmError("mm[" + i + "] must be an array [START,END,MM_HASH], got "
                    + (kind == JsonLexer.V_NUMBER ? "a number" : kind == JsonLexer.V_NULL ? "null" : lex.otherType));
            return;
        }
        lex.pos++;
        lex.skipWs();
        int k = 0;
        if (lex.peek("an array element or ']'") == ']') {
            lex.pos++;
        } else {
            while (true) {
                int kind = lex.valueKind();
                if (kind != JsonLexer.V_NUMBER) {
                    mmError("mm[" + i + "][" + k + "] must be an integer, got "
                            + (kind == JsonLexer.V_NULL ? "null" : lex.otherType));
                } else if (k < 2 ? toUnsigned(F_MM, i, Integer.MAX_VALUE, 0) : k == 2 && toHash(F_MM, i)) {
                    v.mm[3 * i + k] = numValue;
                }
                k++;
                if (!lex.arrayNext()) {
                    break;
                }
            }
        }
        if (k != 3) {
            mmError("mm[" + i + "] has " + k + " elements, expected [START,END,MM_HASH]");
        } else if (v.mm[3 * i] >= v.mm[3 * i + 1]) {
            mmError("mm[" + i + "]: START " + v.mm[3 * i] + " must be below END " + v.mm[3 * i + 1]);
        }
    }

    private void mmError(String e) {
        if (v.error[F_MM] == null) {
            v.error[F_MM] = e;
        }
    }

    private void tokenArray() {
        v.tokenCount = 0;
        if (!arrayStart(F_TOKEN_IDS)) {
            return;
        }
        int[] buf = v.tokens;
        int n = 0;
        while (true) {
            if (n == buf.length) {
                buf = Arrays.copyOf(buf, n * 2);
                v.tokens = buf;
            }
            int c = lex.b[lex.pos];
            long plain = plainToken();
            if (plain >= 0) { // the common case, read in place
                buf[n] = (int) plain;
            } else if (c >= '0' && c <= '9') {
                lex.scanNumber();
                if (lex.numInt && !lex.numBig && (lex.numMag >>> 32) == 0) {
                    buf[n] = (int) lex.numMag;
                } else if (toUnsigned(F_TOKEN_IDS, n, U32_MAX, 0)) {
                    buf[n] = (int) numValue;
                }
            } else {
                int kind = lex.valueKind();
                if (kind == JsonLexer.V_NUMBER) {
                    if (toUnsigned(F_TOKEN_IDS, n, U32_MAX, 0)) {
                        buf[n] = (int) numValue;
                    }
                } else if (v.error[F_TOKEN_IDS] == null) {
                    v.error[F_TOKEN_IDS] = "token_ids[" + n + "] must be an integer, got "
                            + (kind == JsonLexer.V_NULL ? "null" : lex.otherType);
                }
            }
            n++;
            if (!lex.arrayNext()) {
                break;
            }
        }
        v.tokenCount = n;
    }

    /**
     * The token at pos if it is written the plain way (1 to 10 digits, no leading zero, no fraction
     * or exponent, at most 2^32-1), consumed; otherwise -1 and nothing consumed, and the lexer reads
     * the number in full (and explains it when it is wrong).
     */
    private long plainToken() {
        byte[] b = lex.b;
        int p = lex.pos;
        int end = Math.min(lex.end, p + 11);
        long value = 0;
        int q = p;
        while (q < end) {
            int d = b[q] - '0';
            if (d < 0 || d > 9) {
                break;
            }
            value = value * 10 + d;
            q++;
        }
        int digits = q - p;
        if (digits == 0 || digits > 10 || value > U32_MAX || (digits > 1 && b[p] == '0')) {
            return -1;
        }
        if (q < lex.end && (b[q] == '.' || b[q] == 'e' || b[q] == 'E' || b[q] >= '0' && b[q] <= '9')) {
            return -1;
        }
        lex.pos = q;
        return value;
    }

    // ------------------------------------------------------------------ numbers

    /** A number-typed field at pos: true if a number was scanned; null is marked; other types recorded. */
    private boolean scalar(int f) {
        int kind = lex.valueKind();
        if (kind == JsonLexer.V_NUMBER) {
            return true;
        }
        if (kind == JsonLexer.V_NULL) {
            v.nulls |= 1 << f;
        } else if (v.error[f] == null) {
            v.error[f] = FIELD[f] + " must be an integer, got " + lex.otherType;
        }
        return false;
    }

    /** The scanned number as 64 hash bits (negative values as two's complement), or records why not. */
    private boolean toHash(int f, int index) {
        if (lex.numInt && !lex.numBig && (!lex.numNeg || Long.compareUnsigned(lex.numMag, Long.MIN_VALUE) <= 0)) {
            numValue = lex.numNeg ? -lex.numMag : lex.numMag;
            return true;
        }
        if (v.error[f] == null) {
            v.error[f] = label(f, index)
                    + (lex.numInt
                            ? " is outside the hash range -9223372036854775808..18446744073709551615: "
                            : " must be an integer, got ")
                    + lex.numberText();
        }
        return false;
    }

    /** The scanned number as an unsigned value in {@code min .. max}, or records why not. */
    private boolean toUnsigned(int f, int index, long max, long min) {
        boolean negative = lex.numNeg && lex.numMag != 0; // -0 is 0
        if (lex.numInt
                && !lex.numBig
                && !negative
                && Long.compareUnsigned(lex.numMag, max) <= 0
                && Long.compareUnsigned(lex.numMag, min) >= 0) {
            numValue = lex.numMag;
            return true;
        }
        if (v.error[f] == null) {
            String what = !lex.numInt
                    ? " must be an integer, got "
                    : " is outside " + min + ".." + Long.toUnsignedString(max) + ": ";
            v.error[f] = label(f, index) + what + lex.numberText();
        }
        return false;
    }

    private String label(int f, int index) {
        return index < 0
                ? FIELD[f]
                : f == F_BLOCKS ? "blocks[" + index + "]." + BLOCK_FIELD[blockKey] : FIELD[f] + "[" + index + "]";
    }

    private static byte[][] ascii(String[] names) {
        byte[][] out = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            out[i] = JsonLexer.ascii(names[i]);
        }
        return out;
    }
}
