package io.kvprefix.opstream.internal;

import java.util.Arrays;

/**
 * The fields of one op-stream line (docs/SPEC.md section 5), as a {@link FieldReader} read them
 * through a {@link JsonLexer}: which defined fields the line has, which are {@code null}, their
 * values in the types the format gives them (unsigned 64-bit worker ids and hashes, unsigned 32-bit
 * ranks, tokens and block sizes, strings), and for each field the first problem with its value.
 *
 * <p>A problem with a value (a string where a number belongs, a number out of range, a fraction) is
 * recorded against its field and not raised: whether it matters depends on the op, which may not use
 * that field at all, and only the op builder knows that. Problems with the JSON itself (and a defined
 * field given twice) make the whole line malformed: {@link #read} returns their reason.
 *
 * <p>Thread-safety: not thread-safe (per-line scratch state); one instance per parser.
 */
public final class LineFields {
    /** How deep arrays and objects may nest inside an ignored value. */
    public static final int MAX_NESTING = JsonLexer.MAX_NESTING;

    // ------------------------------------------------------------------ names

    /** The defined fields of a line, as bit positions in {@link #has} and indexes of {@link #name}. */
    public static final int F_OP = 0,
            F_WORKER = 1,
            F_DP_RANK = 2,
            F_PARENT_HASH = 3,
            F_BLOCKS = 4,
            F_TOKEN_IDS = 5,
            F_BLOCK_SIZE = 6,
            F_BLOCK_HASHES = 7,
            F_LOCAL_HASHES = 8,
            F_LORA_NAME = 9,
            F_CACHE_NAMESPACE = 10,
            F_MM = 11,
            F_MEDIUM = 12;

    static final String[] FIELD = {
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
        "cache_namespace",
        "mm",
        "medium"
    };

    /** The ops, as {@link #op()} gives them. */
    public static final int OP_UNKNOWN = -1,
            OP_STORED = 0,
            OP_REMOVED = 1,
            OP_CLEARED = 2,
            OP_REMOVE_WORKER = 3,
            OP_MATCH = 4,
            OP_EXPLAIN = 5,
            OP_COPIED = 6;
    /** Scratch arrays that grew past this many entries are dropped after the line. */
    private static final int SHRINK_ABOVE = 1 << 20;

    // ------------------------------------------------------------------ per-line state

    private final JsonLexer lex = new JsonLexer();
    private final FieldReader reader = new FieldReader(this, lex);

    // The values below are written by the FieldReader as it reads the line.

    /** Bit {@code 1 << F_*} per defined field seen on this line, and per field given as {@code null}. */
    int seen;

    int nulls;
    /** The first problem with each field's value, checked only if the op uses the field. */
    final String[] error = new String[FIELD.length];

    int op;
    String opText;
    long worker;
    long dpRank;
    long parentHash;
    long blockSize;
    long[] blockE = new long[64];
    long[] blockL = new long[64];
    int blockCount;
    int[] tokens = new int[1024];
    int tokenCount;
    long[] blockHashes = new long[64];
    int blockHashCount;
    long[] localHashes = new long[64];
    int localHashCount;
    String loraName;
    String cacheNamespace;
    String medium;
    /** {@code mm}: (start, end, mm_hash) per item, three longs each. */
    long[] mm = new long[24];

    int mmCount;

    /** Fields with empty scratch buffers. */
    public LineFields() {}

    /**
     * Reads the line {@code line[offset .. offset+length)}: null if it is one JSON object with no
     * defined field twice (the fields are then available until the next call), otherwise the reason
     * it is malformed. The bytes are only read during the call.
     */
    public String read(byte[] line, int offset, int length) {
        lex.reset(line, offset, length);
        seen = 0;
        nulls = 0;
        Arrays.fill(error, null);
        op = OP_UNKNOWN;
        opText = null;
        blockCount = tokenCount = blockHashCount = localHashCount = mmCount = 0;
        loraName = cacheNamespace = medium = null;
        try {
            lex.skipWs();
            if (lex.pos == lex.end) {
                return "blank line (expected one JSON object)";
            }
            if (lex.b[lex.pos] != '{') {
                return lex.notAnObject();
            }
            reader.topObject();
            lex.skipWs();
            if (lex.pos != lex.end) {
                throw lex.unexpected(lex.pos, "nothing but whitespace after the JSON object (trailing data)");
            }
            return null;
        } catch (JsonLexer.Malformed e) {
            return e.getMessage();
        }
    }

    /** Forgets the line and drops scratch arrays that an unusually long line made large. */
    public void release() {
        lex.release();
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
    }

    // ------------------------------------------------------------------ what the line holds

    /** The name of field {@code f}, such as {@code "dp_rank"}. */
    public static String name(int f) {
        return FIELD[f];
    }

    /** True if the line has field {@code f} (with any value, {@code null} included). */
    public boolean has(int f) {
        return (seen & (1 << f)) != 0;
    }

    /** True if field {@code f} is {@code null}. */
    public boolean isNull(int f) {
        return (nulls & (1 << f)) != 0;
    }

    /** Null if field {@code f} is present, not null and well-formed; otherwise why not. */
    public String required(int f) {
        if (!has(f)) {
            return "required field \"" + FIELD[f] + "\" is missing";
        }
        if (isNull(f)) {
            return "required field \"" + FIELD[f] + "\" is null";
        }
        return error[f];
    }

    /** Null if field {@code f} is absent, or null where allowed, or well-formed; otherwise why not. */
    public String optional(int f, boolean nullAllowed) {
        if (!has(f)) {
            return null;
        }
        if (isNull(f)) {
            return nullAllowed ? null : "field \"" + FIELD[f] + "\" is null (leave it out instead)";
        }
        return error[f];
    }

    /** The op, one of {@code OP_*}; {@link #OP_UNKNOWN} for a name the format does not define. */
    public int op() {
        return op;
    }

    /** The op's text when it is unknown (null otherwise). */
    public String opText() {
        return opText;
    }

    public long worker() {
        return worker;
    }

    public long dpRank() {
        return dpRank;
    }

    public long parentHash() {
        return parentHash;
    }

    /** The block size, 1 .. 2^32-1. */
    public long blockSize() {
        return blockSize;
    }

    /** The engine hashes of the {@code blocks} elements, a fresh copy. */
    public long[] blockEngineHashes() {
        return Arrays.copyOf(blockE, blockCount);
    }

    /** The local hashes ({@code tokens_hash}) of the {@code blocks} elements, a fresh copy. */
    public long[] blockLocalHashes() {
        return Arrays.copyOf(blockL, blockCount);
    }

    /** {@code token_ids}, a fresh copy. */
    public int[] tokens() {
        return Arrays.copyOf(tokens, tokenCount);
    }

    public int tokenCount() {
        return tokenCount;
    }

    /** {@code block_hashes}, a fresh copy. */
    public long[] blockHashes() {
        return Arrays.copyOf(blockHashes, blockHashCount);
    }

    public int blockHashCount() {
        return blockHashCount;
    }

    /** {@code local_hashes}, a fresh copy. */
    public long[] localHashes() {
        return Arrays.copyOf(localHashes, localHashCount);
    }

    /** The {@code mm} items as spans, in line order (empty when absent or {@code null}). */
    public java.util.List<io.kvprefix.BlockHasher.MmSpan> mmSpans() {
        java.util.List<io.kvprefix.BlockHasher.MmSpan> out = new java.util.ArrayList<>(mmCount);
        for (int i = 0; i < mmCount; i++) {
            out.add(new io.kvprefix.BlockHasher.MmSpan((int) mm[3 * i], (int) mm[3 * i + 1], mm[3 * i + 2]));
        }
        return out;
    }

    /** {@code lora_name}, null when absent, {@code null} or empty. */
    public String loraName() {
        return loraName;
    }

    /** {@code medium} as written, null when absent or empty. */
    public String medium() {
        return medium;
    }

    /** {@code cache_namespace}, null when absent, {@code null} or empty. */
    public String cacheNamespace() {
        return cacheNamespace;
    }
}
