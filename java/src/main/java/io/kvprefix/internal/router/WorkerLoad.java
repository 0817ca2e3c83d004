package io.kvprefix.internal.router;

import io.kvprefix.Worker;

/**
 * One registered worker's entry in the router's load table: its capacity weight, the load the
 * router's own decisions put on it (active prefill tokens, active decode blocks, active requests, and
 * how many requests it was ever sent), the engine metrics the caller reported, the prefills it has not
 * finished in the order they were sent, what the router has learned of its prefill speed, and a
 * scratch depth used while one decision is being made.
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
    private long routed;
    /** Set once, when the worker is unregistered; later releases still land here, harmlessly. */
    private volatile boolean removed;
    /** Scratch: this worker's depth for the decision being made (0 outside a decision). */
    int depth;
    /** Scratch: its depth over every tier (docs/SPEC.md section 3.1), at least {@link #depth} (0 outside a decision). */
    int anyDepth;
    /** Its position in the load table's dense array (-1 once removed). */
    int slot;

    /** Scratch: true while this worker is in the current decision's list of matched workers. */
    boolean matched;

    /** Its key in the load order ({@link LoadOrder}), its heap there and its position in it (null, -1 if none). */
    double orderKey;

    LoadOrder.Heap heap;
    int heapPos = -1;

    /** Engine metrics as last reported: waiting requests and KV-cache usage (0..1). */
    int waitingRequests;

    double kvCacheUsage;

    /** Prefills sent and not finished, oldest first (a doubly linked list of decisions' nodes). */
    PendingPrefill oldest;

    PendingPrefill youngest;
    /** When the last prefill on this worker finished (or when it joined), clock nanoseconds. */
    long lastPrefillEnd;
    /** Its prefill time as a function of prefill tokens, learned from finished prefills. */
    final PrefillSpeed speed = new PrefillSpeed(PrefillSpeed.WORKER_FORGETTING);

    WorkerLoad(Worker worker, double weight, int slot, long now) {
        this.worker = worker;
        this.weight = weight;
        this.slot = slot;
        this.lastPrefillEnd = now;
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

    /** Requests routed to this worker since it was registered. */
    public long routed() {
        return routed;
    }

    /** True once the worker has been unregistered. */
    public boolean isRemoved() {
        return removed;
    }

    void markRemoved() {
        removed = true;
        slot = -1;
    }

    void add(long prefill, long decode) {
        prefillTokens += prefill;
        decodeBlocks += decode;
        requests++;
        routed++;
    }

    void releasePrefill(long prefill) {
        prefillTokens -= prefill;
    }

    void releaseRequest(long decode) {
        decodeBlocks -= decode;
        requests--;
    }

    /** Appends {@code p} to the prefills not yet finished. */
    void enqueue(PendingPrefill p) {
        p.older = youngest;
        p.younger = null;
        if (youngest == null) {
            oldest = p;
        } else {
            youngest.younger = p;
        }
        youngest = p;
        p.linked = true;
    }

    /** Removes {@code p} from the prefills not yet finished (nothing if it is not there). */
    void dequeue(PendingPrefill p) {
        if (!p.linked) {
            return;
        }
        if (p.older == null) {
            oldest = p.younger;
        } else {
            p.older.younger = p.younger;
        }
        if (p.younger == null) {
            youngest = p.older;
        } else {
            p.younger.older = p.older;
        }
        p.older = null;
        p.younger = null;
        p.linked = false;
    }
}
