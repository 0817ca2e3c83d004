package io.kvprefix.internal.router;

import io.kvprefix.Worker;

/**
 * One registered worker's entry in the router's load table: its capacity weight, the load the
 * router's own decisions put on it (active prefill tokens, active decode blocks, active requests),
 * and a scratch depth used while one decision is being made.
 *
 * <p>Thread-safety: not thread-safe by itself; every field is read and written only while holding
 * the lock of the {@link LoadTable} that created it (the {@code removed} flag is also readable
 * without it).
 */
public final class WorkerLoad {
    private final Worker worker;
    private double weight;
    private long prefillTokens;
    private long decodeBlocks;
    private long requests;
    /** Set once, when the worker is unregistered; later releases still land here, harmlessly. */
    private volatile boolean removed;
    /** Scratch: this worker's depth for the decision being made (0 outside a decision). */
    int depth;
    /** Scratch: its depth over every tier (docs/SPEC.md section 3.1), at least {@link #depth} (0 outside a decision). */
    int anyDepth;

    WorkerLoad(Worker worker, double weight) {
        this.worker = worker;
        this.weight = weight;
    }

    /** The worker. */
    public Worker worker() {
        return worker;
    }

    /** The capacity weight: the worker's costs are divided by it. */
    public double weight() {
        return weight;
    }

    void weight(double w) {
        weight = w;
    }

    /** Uncached tokens of routed requests whose prefill has not finished. */
    public long prefillTokens() {
        return prefillTokens;
    }

    /** Blocks of routed requests that have not finished. */
    public long decodeBlocks() {
        return decodeBlocks;
    }

    /** Routed requests that have not finished. */
    public long requests() {
        return requests;
    }

    /** True once the worker has been unregistered. */
    public boolean isRemoved() {
        return removed;
    }

    void markRemoved() {
        removed = true;
    }

    void add(long prefill, long decode) {
        prefillTokens += prefill;
        decodeBlocks += decode;
        requests++;
    }

    void releasePrefill(long prefill) {
        prefillTokens -= prefill;
    }

    void releaseRequest(long decode) {
        decodeBlocks -= decode;
        requests--;
    }
}
