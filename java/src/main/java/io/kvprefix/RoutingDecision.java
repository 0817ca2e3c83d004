package io.kvprefix;

import io.kvprefix.internal.router.InflightPrefill;
import io.kvprefix.internal.router.LoadTable;
import io.kvprefix.internal.router.PendingPrefill;
import io.kvprefix.internal.router.WorkerLoad;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The worker a {@link Router} chose for one request, and the handle that gives back the load the
 * choice put on that worker.
 *
 * <p>When the router decides, it charges the chosen worker with the request's uncached tokens as
 * active prefill load ({@link #prefillTokens()}) and with the request's blocks as active decode load
 * ({@link #decodeBlocks()}). Call {@link #prefillFinished()} when the request's first token is out
 * (its prefill load is released) and {@link #finished()} when the request is done (whatever is left
 * is released). Both are idempotent, and {@code finished()} alone releases everything; a decision
 * never releases more than it charged, so a worker's load never goes negative. A decision for a worker
 * that has since been removed from the router can still be released; nothing happens then.
 *
 * <p>Thread-safety: thread-safe; the accessors read immutable fields, and the two release calls may
 * race from any threads (each part of the load is released exactly once).
 */
public final class RoutingDecision {
    private static final int PREFILL_RELEASED = 1;
    private static final int REQUEST_RELEASED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(RoutingDecision.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LoadTable table;
    private final WorkerLoad load;
    private final PendingPrefill pending;
    private final InflightPrefill inflight;
    private final int overlapBlocks;
    private final int inputTokens;
    private final int blockSize;
    private final long prefillTokens;
    private final long decodeBlocks;
    private final double cost;
    private final boolean belowMinimumMatch;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    /** The decision {@code c} describes, for a request of {@code inputTokens} at {@code blockSize}. */
    RoutingDecision(LoadTable table, LoadTable.Choice c, int inputTokens, int blockSize) {
        this.table = table;
        this.load = c.load;
        this.pending = c.pending;
        this.inflight = c.inflight;
        this.overlapBlocks = c.depth;
        this.inputTokens = inputTokens;
        this.blockSize = blockSize;
        this.prefillTokens = c.prefillTokens;
        this.decodeBlocks = c.decodeBlocks;
        this.cost = c.cost;
        this.belowMinimumMatch = c.missed;
    }

    /** The chosen worker. */
    public Worker worker() {
        return load.worker();
    }

    /**
     * How many leading blocks of the request the chosen worker holds (its depth; in a router with both
     * an event-fed and a predicted index, the larger of the two).
     */
    public int overlapBlocks() {
        return overlapBlocks;
    }

    /** Tokens of the request the chosen worker holds: {@code overlapBlocks() * blockSize()}. */
    public long cachedTokens() {
        return inputTokens - prefillTokens;
    }

    /** The request's length in tokens ({@code isl}). */
    public int inputTokens() {
        return inputTokens;
    }

    /** The block size the request was hashed with. */
    public int blockSize() {
        return blockSize;
    }

    /** The uncached tokens charged to the worker as active prefill load until {@link #prefillFinished()}. */
    public long prefillTokens() {
        return prefillTokens;
    }

    /** The blocks ({@code floor(isl / blockSize)}) charged as active decode load until {@link #finished()}. */
    public long decodeBlocks() {
        return decodeBlocks;
    }

    /**
     * The chosen worker's cost when it was chosen (lower is better): Dynamo's cost, kvprefix-ttft's
     * estimated tokens ahead, sglang-cache-aware's in-flight requests, or llm-d-scorers' negated score
     * (docs/SPEC.md section 6).
     */
    public double cost() {
        return cost;
    }

    /**
     * True if the policy routed by load alone because no registered worker matched enough: below the
     * minimum match (at least one block; see {@link Router.Builder#minMatchBlocks}) for dynamo-cost and
     * kvprefix-ttft, no overlap or not above the 30% threshold for sglang-cache-aware, no overlap for
     * llm-d-scorers (docs/SPEC.md section 6).
     */
    public boolean belowMinimumMatch() {
        return belowMinimumMatch;
    }

    /**
     * The request's prefill is done: its uncached tokens stop counting as prefill load. Call it when the
     * first token is out: kvprefix-ttft learns the worker's prefill speed from when it is called.
     * Idempotent.
     */
    public void prefillFinished() {
        int old = (int) STATE.getAndBitwiseOr(this, PREFILL_RELEASED);
        if ((old & PREFILL_RELEASED) == 0) {
            table.release(load, prefillTokens, false, 0, pending, true, inflight);
        }
    }

    /** The request is done: its decode blocks (and its prefill tokens, if still counted) are released. Idempotent. */
    public void finished() {
        int old = (int) STATE.getAndBitwiseOr(this, PREFILL_RELEASED | REQUEST_RELEASED);
        if ((old & REQUEST_RELEASED) == 0 || (old & PREFILL_RELEASED) == 0) {
            table.release(
                    load,
                    (old & PREFILL_RELEASED) == 0 ? prefillTokens : 0,
                    (old & REQUEST_RELEASED) == 0,
                    decodeBlocks,
                    (old & PREFILL_RELEASED) == 0 ? pending : null,
                    false,
                    inflight);
        }
    }

    /** True once {@link #finished()} has been called. */
    public boolean isFinished() {
        return ((int) STATE.getVolatile(this) & REQUEST_RELEASED) != 0;
    }

    @Override
    public String toString() {
        return "RoutingDecision[" + worker() + ", overlap=" + overlapBlocks + " blocks, isl=" + inputTokens
                + ", prefill=" + prefillTokens + " tokens, decode=" + decodeBlocks + " blocks, cost=" + cost + "]";
    }
}
