package io.kvprefix.opstream;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes the op-stream format of docs/SPEC.md section 5, one JSON object per line ({@code \n}), UTF-8,
 * every hash and id as an unsigned decimal, keys in the order of the section's line shapes, no
 * spaces: input lines (an {@link Op}, an event or a match, for {@code gen-ops} and for tests) and
 * result lines (statuses, scores and explanations, for {@code replay}). It is the format's only writer; the static
 * {@link #line}, {@link #statusLine} and {@link #scoresLine} give one line as a string.
 *
 * <p>Input lines always carry {@code dp_rank} and {@code parent_hash} (as {@code null} when there is
 * no parent) where the op uses them, and a salt only when it is set.
 *
 * <p>Lines are built in an internal buffer and written to the stream in large chunks; call
 * {@link #flush()} at the end.
 *
 * <p>Thread-safety: not thread-safe; one writer per thread. The static methods are safe from any thread.
 */
public final class OpStreamWriter implements AutoCloseable {
    private static final int FLUSH_AT = 1 << 16;

    private final OutputStream out;
    private final StringBuilder sb;

    /** A writer to {@code out}, which it flushes but never closes. */
    public OpStreamWriter(OutputStream out) {
        this(out, FLUSH_AT);
    }

    private OpStreamWriter(OutputStream out, int capacity) {
        this.out = out;
        this.sb = new StringBuilder(capacity);
    }

    /** A writer for one line, kept in its buffer. */
    private static OpStreamWriter forOneLine() {
        return new OpStreamWriter(OutputStream.nullOutputStream(), 128);
    }

    /** The line in the buffer, without its {@code \n}. */
    private String theLine() {
        return sb.substring(0, sb.length() - 1);
    }

    // ------------------------------------------------------------------ one line as a string

    /**
     * The input line of {@code op}, without its {@code \n}. An {@link Op.Invalid} is written as the
     * line it carries.
     *
     * @throws IllegalArgumentException for an {@link Op.Invalid} that does not carry its line
     */
    public static String line(Op op) {
        OpStreamWriter w = forOneLine();
        w.appendOp(op);
        return w.theLine();
    }

    /** {@code {"status":"ok"}} and the other statuses, without the {@code \n}. */
    public static String statusLine(EventStatus status) {
        OpStreamWriter w = forOneLine();
        w.appendStatus(status);
        return w.theLine();
    }

    /** {@code {"scores":[[W,R,depth],...]}} without the {@code \n}; sorts {@code result} by worker first. */
    public static String scoresLine(MatchResult result) {
        OpStreamWriter w = forOneLine();
        w.appendScores(result);
        return w.theLine();
    }

    /** The answer line of an {@code explain} op, without the {@code \n} (see {@link #explanation}). */
    public static String explanationLine(MatchExplanation e) {
        OpStreamWriter w = forOneLine();
        w.appendExplanation(e);
        return w.theLine();
    }

    // ------------------------------------------------------------------ result lines

    /** {@code {"status":"ok"}} and the other statuses. */
    public void status(EventStatus status) throws IOException {
        appendStatus(status);
        maybeFlush();
    }

    /** {@code {"scores":[[W,R,depth],...]}}; sorts {@code result} by worker first. */
    public void scores(MatchResult result) throws IOException {
        appendScores(result);
        maybeFlush();
    }

    /**
     * The answer to an {@code explain} op (docs/SPEC.md section 5):
     * {@code {"explain":{"blocks":N,"workers":[{"worker":W,"dp_rank":R,"depth":D,"stop":S,"resumes_at":P|null,"salt":null|{"lora_name":..,"cache_namespace":..,"depth":K}},...]}}},
     * workers in worker order.
     */
    public void explanation(MatchExplanation e) throws IOException {
        appendExplanation(e);
        maybeFlush();
    }

    // ------------------------------------------------------------------ input lines

    /**
     * The input line of {@code op}. An {@link Op.Invalid} is written as the line it carries.
     *
     * @throws IllegalArgumentException for an {@link Op.Invalid} that does not carry its line
     */
    public void op(Op op) throws IOException {
        appendOp(op);
        maybeFlush();
    }

    /** One event as an input line. */
    public void event(KvEvent event) throws IOException {
        appendEvent(event);
        maybeFlush();
    }

    /** {@code {"op":"match","local_hashes":[...]}} for {@code localHashes[off .. off+len)}. */
    public void matchHashes(long[] localHashes, int off, int len) throws IOException {
        appendMatchHashes("match", localHashes, off, len);
        maybeFlush();
    }

    /** {@code {"op":"match","token_ids":[...],"block_size":B}} with an optional salt. */
    public void matchTokens(int[] tokens, int off, int len, int blockSize, String loraName, String cacheNamespace)
            throws IOException {
        appendMatchTokens("match", tokens, off, len, blockSize, loraName, cacheNamespace);
        maybeFlush();
    }

    /** A raw line (without its newline), written as is; for tests and tools that pass lines through. */
    public void raw(String line) throws IOException {
        sb.append(line).append('\n');
        maybeFlush();
    }

    // ------------------------------------------------------------------ lines into the buffer

    private void appendStatus(EventStatus status) {
        sb.append("{\"status\":\"").append(status.wireName()).append("\"}\n");
    }

    /**
     * {@code {"scores":[[W,R,depth],...]}} with the GPU depths above 0, then, only when a lower tier
     * holds more of the request for some worker, {@code "any_tier":[[W,R,depth],...]} with every
     * worker's any-tier depth (docs/SPEC.md section 5).
     */
    private void appendScores(MatchResult result) {
        result.sortByWorker();
        sb.append("{\"scores\":[");
        boolean first = true;
        for (int i = 0; i < result.size(); i++) {
            if (result.depth(i) > 0) {
                score(result.worker(i), result.depth(i), first);
                first = false;
            }
        }
        sb.append(']');
        if (result.hasLowerTierDepth()) {
            sb.append(",\"any_tier\":[");
            for (int i = 0; i < result.size(); i++) {
                score(result.worker(i), result.anyTierDepth(i), i == 0);
            }
            sb.append(']');
        }
        sb.append("}\n");
    }

    private void score(Worker w, int depth, boolean first) {
        sb.append(first ? "[" : ",[");
        u64(w.workerId()).append(',');
        u32(w.dpRank()).append(',').append(depth).append(']');
    }

    private void appendExplanation(MatchExplanation e) {
        sb.append("{\"explain\":{\"blocks\":").append(e.queryBlocks()).append(",\"workers\":[");
        for (int i = 0; i < e.workers().size(); i++) {
            MatchExplanation.WorkerStop w = e.workers().get(i);
            sb.append(i > 0 ? ",{\"worker\":" : "{\"worker\":");
            u64(w.worker().workerId()).append(",\"dp_rank\":");
            u32(w.worker().dpRank()).append(",\"depth\":").append(w.depth());
            sb.append(",\"stop\":\"").append(w.stop().wireName()).append("\",\"resumes_at\":");
            sb.append(w.resumesAt() < 0 ? "null" : Integer.toString(w.resumesAt()))
                    .append(",\"salt\":");
            if (w.salt() == null) {
                sb.append("null}");
                continue;
            }
            sb.append("{\"lora_name\":");
            stringOrNull(w.salt().loraName());
            sb.append(",\"cache_namespace\":");
            stringOrNull(w.salt().cacheNamespace());
            sb.append(",\"depth\":").append(w.saltDepth()).append("}}");
        }
        sb.append("]}}\n");
    }

    private void stringOrNull(String s) {
        if (s == null) {
            sb.append("null");
        } else {
            string(s);
        }
    }

    private void appendOp(Op op) {
        switch (op) {
            case Op.Event e -> appendEvent(e.event());
            case Op.HashMatch m -> appendMatchHashes("match", m.localHashes(), 0, m.localHashes().length);
            case Op.TokenMatch m -> {
                appendMatchTokens(
                        "match", m.tokenIds(), 0, m.tokenIds().length, m.blockSize(), m.loraName(), m.cacheNamespace());
                appendMm(m.mm());
            }
            case Op.Explain(Op.HashMatch m) -> appendMatchHashes("explain", m.localHashes(), 0, m.localHashes().length);
            case Op.Explain(Op.TokenMatch m) -> {
                appendMatchTokens(
                        "explain",
                        m.tokenIds(),
                        0,
                        m.tokenIds().length,
                        m.blockSize(),
                        m.loraName(),
                        m.cacheNamespace());
                appendMm(m.mm());
            }
            case Op.Explain x -> throw new IllegalArgumentException("an explain op holds a match: " + x);
            case Op.Invalid i -> {
                if (i.line() == null) {
                    throw new IllegalArgumentException("an invalid op without its line cannot be written: " + i);
                }
                sb.append(i.line()).append('\n');
            }
        }
    }

    private void appendEvent(KvEvent event) {
        switch (event) {
            case KvEvent.Stored s -> {
                head("stored", s.worker());
                parent(s.parentHash().isPresent(), s.parentHash().orElse(0));
                sb.append(",\"blocks\":[");
                for (int i = 0; i < s.size(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    sb.append("{\"block_hash\":");
                    u64(s.blockHashes()[i]).append(",\"tokens_hash\":");
                    u64(s.localHashes()[i]).append('}');
                }
                sb.append(']');
                medium(s.medium());
                sb.append("}\n");
            }
            case KvEvent.StoredTokens t -> {
                head("stored", t.worker());
                parent(t.parentHash().isPresent(), t.parentHash().orElse(0));
                sb.append(",\"token_ids\":");
                tokens(t.tokenIds(), 0, t.tokenIds().length);
                sb.append(",\"block_size\":").append(t.blockSize()).append(",\"block_hashes\":");
                hashes(t.blockHashes(), 0, t.blockHashes().length);
                salt(t.loraName(), t.cacheNamespace());
                blockMm(t);
                medium(t.medium());
                sb.append("}\n");
            }
            case KvEvent.Removed r -> {
                head("removed", r.worker());
                sb.append(",\"block_hashes\":");
                hashes(r.blockHashes(), 0, r.blockHashes().length);
                medium(r.medium());
                sb.append("}\n");
            }
            case KvEvent.Copied c -> {
                head("copied", c.worker());
                sb.append(",\"block_hashes\":");
                hashes(c.blockHashes(), 0, c.blockHashes().length);
                medium(c.medium());
                sb.append("}\n");
            }
            case KvEvent.Cleared c -> {
                head("cleared", c.worker());
                sb.append("}\n");
            }
            case KvEvent.RemoveWorker rw -> {
                sb.append("{\"op\":\"remove_worker\",\"worker\":");
                u64(rw.workerId()).append("}\n");
            }
        }
    }

    private void appendMatchHashes(String op, long[] localHashes, int off, int len) {
        sb.append("{\"op\":\"").append(op).append("\",\"local_hashes\":");
        hashes(localHashes, off, len);
        sb.append("}\n");
    }

    private void appendMatchTokens(
            String op, int[] tokens, int off, int len, int blockSize, String loraName, String cacheNamespace) {
        sb.append("{\"op\":\"").append(op).append("\",\"token_ids\":");
        tokens(tokens, off, len);
        sb.append(",\"block_size\":").append(blockSize);
        salt(loraName, cacheNamespace);
        sb.append("}\n");
    }

    // ------------------------------------------------------------------ pieces

    private void head(String op, Worker w) {
        sb.append("{\"op\":\"").append(op).append("\",\"worker\":");
        u64(w.workerId()).append(",\"dp_rank\":");
        u32(w.dpRank());
    }

    private void parent(boolean has, long parent) {
        sb.append(",\"parent_hash\":");
        if (has) {
            u64(parent);
        } else {
            sb.append("null");
        }
    }

    /** Re-opens the line just appended to add its {@code "mm"} items (none: the line stays as it is). */
    private void appendMm(java.util.List<BlockHasher.MmSpan> mm) {
        if (mm.isEmpty()) {
            return;
        }
        sb.setLength(sb.length() - 2); // "}\n"
        sb.append(",\"mm\":[");
        for (int i = 0; i < mm.size(); i++) {
            BlockHasher.MmSpan sp = mm.get(i);
            sb.append(i > 0 ? ",[" : "[")
                    .append(sp.start())
                    .append(',')
                    .append(sp.end())
                    .append(',');
            u64(sp.mmHash()).append(']');
        }
        sb.append("]}\n");
    }

    /** A store's per-block multimodal hashes as {@code "mm"} items, one per (block, hash): the block's own span. */
    private void blockMm(KvEvent.StoredTokens t) {
        if (!t.hasMultimodal()) {
            return;
        }
        sb.append(",\"mm\":[");
        boolean first = true;
        for (int b = 0; b < t.mmHashes().length; b++) {
            long[] m = t.mmHashes()[b];
            for (int k = 0; m != null && k < m.length; k++) {
                sb.append(first ? "[" : ",[")
                        .append((long) b * t.blockSize())
                        .append(',')
                        .append((long) (b + 1) * t.blockSize())
                        .append(',');
                u64(m[k]).append(']');
                first = false;
            }
        }
        sb.append(']');
    }

    /** {@code ,"medium":"CPU"}; nothing for the GPU (the default). */
    private void medium(io.kvprefix.Medium m) {
        if (m != io.kvprefix.Medium.GPU) {
            sb.append(",\"medium\":\"").append(m.name()).append('"');
        }
    }

    private void salt(String lora, String ns) {
        if (lora != null && !lora.isEmpty()) {
            sb.append(",\"lora_name\":");
            string(lora);
        }
        if (ns != null && !ns.isEmpty()) {
            sb.append(",\"cache_namespace\":");
            string(ns);
        }
    }

    private void hashes(long[] a, int off, int len) {
        sb.append('[');
        for (int i = 0; i < len; i++) {
            if (i > 0) {
                sb.append(',');
            }
            u64(a[off + i]);
        }
        sb.append(']');
    }

    private void tokens(int[] a, int off, int len) {
        sb.append('[');
        for (int i = 0; i < len; i++) {
            if (i > 0) {
                sb.append(',');
            }
            u32(a[off + i]);
        }
        sb.append(']');
    }

    private StringBuilder u64(long v) {
        return v >= 0 ? sb.append(v) : sb.append(Long.toUnsignedString(v));
    }

    private StringBuilder u32(int v) {
        return sb.append(Integer.toUnsignedLong(v));
    }

    /** A JSON string (RFC 8259 escapes). */
    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    private void maybeFlush() throws IOException {
        if (sb.length() >= FLUSH_AT) {
            drain();
        }
    }

    private void drain() throws IOException {
        out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
        sb.setLength(0);
    }

    /** Writes everything buffered and flushes the stream. */
    public void flush() throws IOException {
        drain();
        out.flush();
    }

    /** Flushes; does not close the underlying stream (it may be standard output). */
    @Override
    public void close() throws IOException {
        flush();
    }
}
