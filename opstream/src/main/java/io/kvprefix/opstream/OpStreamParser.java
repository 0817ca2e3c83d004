package io.kvprefix.opstream;

import io.kvprefix.BlockHasher;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import io.kvprefix.opstream.internal.LineFields;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A strict parser for one op-stream line (docs/SPEC.md section 5): raw bytes in, an {@link Op} out.
 * Every malformed line gives {@link Op.Invalid} with a one-line reason; the parser never throws for
 * any input bytes. What is malformed, and every decision where RFC 8259 leaves room (duplicate
 * names, {@code -0}, fields an op ignores, the two forms, empty names, block sizes past 2^31,
 * {@code \r}, lone surrogates, nesting past {@value #MAX_NESTING}) is section 5, <em>Validation</em>; a
 * {@code block_size} in 2^31 .. 2^32-1 comes out as {@link Integer#MAX_VALUE} (both give zero full
 * blocks). How the parser is split between the tokenizer, the field reader and the op builders here is
 * this package's description. One instance reuses its scratch buffers from line to line; the results
 * it returns are independent copies.
 *
 * <p>Thread-safety: not thread-safe (it holds per-line scratch state); use one parser per thread.
 */
public final class OpStreamParser {
    /** How deep arrays and objects may nest inside an ignored value. */
    public static final int MAX_NESTING = LineFields.MAX_NESTING;

    private final LineFields fields = new LineFields();

    /** A parser with empty scratch buffers. */
    public OpStreamParser() {}

    // ------------------------------------------------------------------ entry points

    /** Parses a line given as a string (encoded as UTF-8 first; convenient in tests). */
    public Op parse(String line) {
        return parse(line.getBytes(StandardCharsets.UTF_8));
    }

    /** Parses a whole array as one line. */
    public Op parse(byte[] line) {
        return parse(line, 0, line.length);
    }

    /**
     * Parses {@code line[offset .. offset+length)}, one line without its {@code \n}. The bytes are
     * only read during the call.
     */
    public Op parse(byte[] line, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, line.length);
        try {
            String malformed = fields.read(line, offset, length);
            return malformed != null ? invalid(malformed) : build();
        } finally {
            fields.release();
        }
    }

    // ------------------------------------------------------------------ building the result

    private Op build() {
        String e;
        if ((e = fields.required(LineFields.F_OP)) != null) {
            return invalid(e);
        }
        return switch (fields.op()) {
            case LineFields.OP_STORED -> stored();
            case LineFields.OP_REMOVED, LineFields.OP_COPIED -> removedOrCopied(fields.op() == LineFields.OP_COPIED);
            case LineFields.OP_CLEARED -> {
                Worker w = workerOrNull();
                yield w == null ? workerProblem() : new Op.Event(new KvEvent.Cleared(w));
            }
            case LineFields.OP_REMOVE_WORKER -> {
                if ((e = fields.required(LineFields.F_WORKER)) != null) {
                    yield invalid(e);
                }
                yield new Op.Event(new KvEvent.RemoveWorker(fields.worker()));
            }
            case LineFields.OP_MATCH -> match("match");
            case LineFields.OP_EXPLAIN -> {
                Op m = match("explain");
                yield m instanceof Op.Invalid ? m : new Op.Explain(m);
            }
            default ->
                invalid(
                        "unknown op \"" + printable(fields.opText())
                                + "\" (ops are case-sensitive: stored, removed, copied, cleared, remove_worker, match, explain)");
        };
    }

    /** {@code removed} (medium optional) or {@code copied} (a lower-tier medium required). */
    private Op removedOrCopied(boolean copied) {
        Worker w = workerOrNull();
        if (w == null) {
            return workerProblem();
        }
        String e;
        if ((e = fields.required(LineFields.F_BLOCK_HASHES)) != null) {
            return invalid(e);
        }
        if (copied && (e = fields.required(LineFields.F_MEDIUM)) != null) {
            return invalid(e);
        }
        Medium m = medium();
        if (m == null) {
            return invalid(mediumProblem());
        }
        if (copied && m == Medium.GPU) {
            return invalid("copied: medium must be a lower tier (CPU or DISK), not GPU");
        }
        return new Op.Event(
                copied
                        ? new KvEvent.Copied(w, fields.blockHashes(), m)
                        : new KvEvent.Removed(w, fields.blockHashes(), m));
    }

    /** The line's {@code medium}: GPU when absent; null when it is not one of GPU, CPU, DISK. */
    private Medium medium() {
        if (!fields.has(LineFields.F_MEDIUM)) {
            return Medium.GPU;
        }
        if (fields.optional(LineFields.F_MEDIUM, false) != null || fields.medium() == null) {
            return null;
        }
        return switch (fields.medium()) {
            case "GPU" -> Medium.GPU;
            case "CPU" -> Medium.CPU;
            case "DISK" -> Medium.DISK;
            default -> null;
        };
    }

    private String mediumProblem() {
        String e = fields.optional(LineFields.F_MEDIUM, false);
        return e != null ? e : "medium must be \"GPU\", \"CPU\" or \"DISK\" (case-sensitive)";
    }

    private Op stored() {
        Worker w = workerOrNull();
        if (w == null) {
            return workerProblem();
        }
        String e;
        Medium medium = medium();
        if (medium == null) {
            return invalid(mediumProblem());
        }
        if ((e = fields.optional(LineFields.F_PARENT_HASH, true)) != null) {
            return invalid(e);
        }
        OptionalLong parent = fields.has(LineFields.F_PARENT_HASH) && !fields.isNull(LineFields.F_PARENT_HASH)
                ? OptionalLong.of(fields.parentHash())
                : OptionalLong.empty();
        boolean hashForm = fields.has(LineFields.F_BLOCKS);
        boolean tokenForm = fields.has(LineFields.F_TOKEN_IDS);
        if (hashForm && tokenForm) {
            return invalid("a stored line carries both forms: \"blocks\" and \"token_ids\"");
        }
        if (hashForm) {
            if ((e = fields.required(LineFields.F_BLOCKS)) != null) {
                return invalid(e);
            }
            return new Op.Event(
                    new KvEvent.Stored(w, parent, fields.blockEngineHashes(), fields.blockLocalHashes(), medium));
        }
        if (!tokenForm) {
            return invalid("a stored line needs \"blocks\" (hash form) or \"token_ids\" (token form)");
        }
        if ((e = fields.required(LineFields.F_TOKEN_IDS)) != null
                || (e = fields.required(LineFields.F_BLOCK_SIZE)) != null
                || (e = fields.required(LineFields.F_BLOCK_HASHES)) != null
                || (e = fields.optional(LineFields.F_LORA_NAME, true)) != null
                || (e = fields.optional(LineFields.F_CACHE_NAMESPACE, true)) != null
                || (e = fields.optional(LineFields.F_MM, true)) != null) {
            return invalid(e);
        }
        long fullBlocks = fields.tokenCount() / fields.blockSize();
        if (fullBlocks != fields.blockHashCount()) {
            return invalid(fields.tokenCount() + " token_ids at block_size " + fields.blockSize() + " make "
                    + fullBlocks + " full block(s), but block_hashes has " + fields.blockHashCount());
        }
        try {
            return new Op.Event(new KvEvent.StoredTokens(
                    w,
                    parent,
                    fields.tokens(),
                    intBlockSize(),
                    fields.blockHashes(),
                    fields.loraName(),
                    fields.cacheNamespace(),
                    BlockHasher.multimodalExtras(intBlockSize(), fields.tokenCount(), fields.mmSpans()),
                    medium));
        } catch (IllegalArgumentException ex) { // the checks above make this unreachable; never crash on it
            return invalid(ex.getMessage());
        }
    }

    /** A match line's request (an {@code explain} line's too: the same fields). */
    private Op match(String op) {
        boolean hashForm = fields.has(LineFields.F_LOCAL_HASHES);
        boolean tokenForm = fields.has(LineFields.F_TOKEN_IDS);
        String e;
        if (hashForm && tokenForm) {
            return invalid("a " + op + " line carries both forms: \"local_hashes\" and \"token_ids\"");
        }
        if (hashForm) {
            if ((e = fields.required(LineFields.F_LOCAL_HASHES)) != null) {
                return invalid(e);
            }
            return new Op.HashMatch(fields.localHashes());
        }
        if (!tokenForm) {
            return invalid("a " + op + " line needs \"local_hashes\" (hash form) or \"token_ids\" (token form)");
        }
        if ((e = fields.required(LineFields.F_TOKEN_IDS)) != null
                || (e = fields.required(LineFields.F_BLOCK_SIZE)) != null
                || (e = fields.optional(LineFields.F_LORA_NAME, true)) != null
                || (e = fields.optional(LineFields.F_CACHE_NAMESPACE, true)) != null
                || (e = fields.optional(LineFields.F_MM, true)) != null) {
            return invalid(e);
        }
        return new Op.TokenMatch(
                fields.tokens(), intBlockSize(), fields.loraName(), fields.cacheNamespace(), fields.mmSpans());
    }

    private int intBlockSize() {
        return (int) Math.min(fields.blockSize(), Integer.MAX_VALUE);
    }

    /** The line's worker, or null if {@code worker} / {@code dp_rank} are not usable (see {@link #workerProblem}). */
    private Worker workerOrNull() {
        if (fields.required(LineFields.F_WORKER) != null || fields.optional(LineFields.F_DP_RANK, false) != null) {
            return null;
        }
        return new Worker(fields.worker(), fields.has(LineFields.F_DP_RANK) ? (int) fields.dpRank() : 0);
    }

    private Op workerProblem() {
        String e = fields.required(LineFields.F_WORKER);
        return invalid(e != null ? e : fields.optional(LineFields.F_DP_RANK, false));
    }

    private static Op invalid(String reason) {
        return new Op.Invalid(reason);
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
}
