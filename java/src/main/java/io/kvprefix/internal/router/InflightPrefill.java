package io.kvprefix.internal.router;

/**
 * One decision's credit of its request's blocks to the chosen worker while the worker prefills them
 * (docs/SPEC.md section 6.7): the deepest node of the request's path in {@link InflightBlocks}, from
 * which the credit is taken back at {@code finished()} or once the index covers the blocks.
 *
 * <p>Thread-safety: not thread-safe; read and written only under its {@link LoadTable}'s lock.
 */
public final class InflightPrefill {
    final WorkerLoad load;
    final InflightBlocks.Node leaf;
    final int blocks;
    /** True while the blocks are credited. */
    boolean linked = true;
    /** True once it is in the queue of prefills whose coverage is checked. */
    boolean queued;

    InflightPrefill(WorkerLoad load, InflightBlocks.Node leaf, int blocks) {
        this.load = load;
        this.leaf = leaf;
        this.blocks = blocks;
    }

    /** The worker credited. */
    public WorkerLoad load() {
        return load;
    }

    /** How many blocks are credited (the request's full blocks). */
    public int blocks() {
        return blocks;
    }
}
