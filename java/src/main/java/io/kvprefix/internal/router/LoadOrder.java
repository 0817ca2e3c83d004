package io.kvprefix.internal.router;

import java.util.Arrays;
import java.util.HashMap;

/**
 * The registered workers ordered by load, so that a dynamo-cost decision visits the workers the
 * request matches and only the cheapest of the rest (docs/SPEC.md section 6.5): one indexed binary
 * min-heap per distinct capacity weight, keyed by {@code overlapWeight * prefillTokens + blockSize *
 * decodeBlocks}, to which a worker's dynamo-cost at depth 0 is monotone for every request at the
 * table's block size. A load change re-sifts one entry (O(log n), no allocation); a walk visits
 * entries in key order through a small frontier heap, so reading the {@code k} cheapest costs
 * O(k log k) whatever the fleet's size. For kvprefix-ttft the key is the requests routed (its
 * tie-break) and the heaps hold only the workers its table puts there. Equal keys order by worker.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock.
 */
final class LoadOrder {
    private final double overlapWeight;
    private final int blockSize;
    /** kvprefix-ttft's order: by requests routed (its tie-break), for the workers it keeps here. */
    private final boolean byRouted;

    private final HashMap<Double, Heap> byWeight = new HashMap<>();
    private Heap[] heaps = new Heap[4];
    private int heapCount;
    /** The walk's frontier: positions in the heap being walked, a min-heap by their entries' keys. */
    private int[] frontier = new int[64];

    private int frontierSize;
    private Heap walked;
    /** Entries every walk so far has returned (what a decision's cost grows with; read by tests). */
    private long visits;

    /** dynamo-cost's order: by load key, every registered worker. */
    LoadOrder(double overlapWeight, int blockSize) {
        this.overlapWeight = overlapWeight;
        this.blockSize = blockSize;
        this.byRouted = false;
    }

    /** kvprefix-ttft's order: by requests routed, then by worker, for the workers the table puts here. */
    LoadOrder() {
        this.overlapWeight = 0;
        this.blockSize = 0;
        this.byRouted = true;
    }

    /** The block size the keys are made for; requests at another block size scan every worker. */
    int blockSize() {
        return blockSize;
    }

    long visits() {
        return visits;
    }

    int heapCount() {
        return heapCount;
    }

    Heap heap(int i) {
        return heaps[i];
    }

    /** Puts {@code w} (not in any heap) into its weight's heap. */
    void insert(WorkerLoad w) {
        Heap h = byWeight.get(w.weight());
        if (h == null) {
            h = new Heap(heapCount);
            byWeight.put(w.weight(), h);
            if (heapCount == heaps.length) {
                heaps = Arrays.copyOf(heaps, heapCount * 2);
            }
            heaps[heapCount++] = h;
        }
        w.orderKey = key(w);
        h.add(w);
    }

    /** Takes {@code w} out of its heap (nothing if it is in none); an emptied heap is dropped. */
    void remove(WorkerLoad w) {
        Heap h = w.heap;
        if (h == null) {
            return;
        }
        h.remove(w);
        if (h.size == 0) {
            byWeight.remove(w.weight());
            Heap last = heaps[--heapCount];
            heaps[h.slot] = last;
            last.slot = h.slot;
            heaps[heapCount] = null;
        }
    }

    /** Re-keys {@code w} after its load changed (nothing if it is in no heap). */
    void update(WorkerLoad w) {
        if (w.heap != null) {
            double k = key(w);
            if (k != w.orderKey) {
                w.orderKey = k;
                w.heap.resift(w);
            }
        }
    }

    /** The heap order: by key, then by worker (so equal keys come out in worker order). */
    static boolean less(WorkerLoad a, WorkerLoad b) {
        return a.orderKey < b.orderKey || a.orderKey == b.orderKey && a.worker().compareTo(b.worker()) < 0;
    }

    private double key(WorkerLoad w) {
        if (byRouted) {
            return (double) w.routed();
        }
        return overlapWeight * (double) w.prefillTokens() + (double) blockSize * (double) w.decodeBlocks();
    }

    /** Starts a walk of {@code h} in key order; {@link #next} returns its entries one by one. */
    void startWalk(Heap h) {
        walked = h;
        frontierSize = 0;
        if (h.size > 0) {
            frontier[frontierSize++] = 0;
        }
    }

    /** The next entry of the walk in key order, or null when the heap is exhausted. */
    WorkerLoad next() {
        if (frontierSize == 0) {
            return null;
        }
        Heap h = walked;
        int pos = frontier[0];
        int last = frontier[--frontierSize];
        if (frontierSize > 0) {
            frontier[0] = last;
            siftFrontier(h);
        }
        int child = 2 * pos + 1;
        if (child < h.size) {
            pushFrontier(h, child);
        }
        if (child + 1 < h.size) {
            pushFrontier(h, child + 1);
        }
        visits++;
        return h.items[pos];
    }

    private void pushFrontier(Heap h, int pos) {
        if (frontierSize == frontier.length) {
            frontier = Arrays.copyOf(frontier, frontierSize * 2);
        }
        int i = frontierSize++;
        WorkerLoad w = h.items[pos];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!less(w, h.items[frontier[parent]])) {
                break;
            }
            frontier[i] = frontier[parent];
            i = parent;
        }
        frontier[i] = pos;
    }

    private void siftFrontier(Heap h) {
        int i = 0;
        int pos = frontier[0];
        WorkerLoad w = h.items[pos];
        while (true) {
            int c = 2 * i + 1;
            if (c >= frontierSize) {
                break;
            }
            if (c + 1 < frontierSize && less(h.items[frontier[c + 1]], h.items[frontier[c]])) {
                c++;
            }
            if (!less(h.items[frontier[c]], w)) {
                break;
            }
            frontier[i] = frontier[c];
            i = c;
        }
        frontier[i] = pos;
    }

    /**
     * The workers of one capacity weight, an indexed binary min-heap by key ({@link WorkerLoad#heapPos}).
     *
     * <p>Thread-safety: not thread-safe; used under its table's lock.
     */
    static final class Heap {
        WorkerLoad[] items = new WorkerLoad[16];
        int size;
        int slot;

        Heap(int slot) {
            this.slot = slot;
        }

        void add(WorkerLoad w) {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
            }
            w.heap = this;
            items[size] = w;
            w.heapPos = size++;
            up(w.heapPos);
        }

        void remove(WorkerLoad w) {
            int pos = w.heapPos;
            WorkerLoad last = items[--size];
            items[size] = null;
            w.heap = null;
            w.heapPos = -1;
            if (last != w) {
                items[pos] = last;
                last.heapPos = pos;
                resift(last);
            }
        }

        void resift(WorkerLoad w) {
            up(w.heapPos);
            down(w.heapPos);
        }

        private void up(int i) {
            WorkerLoad w = items[i];
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (!less(w, items[parent])) {
                    break;
                }
                place(items[parent], i);
                i = parent;
            }
            place(w, i);
        }

        private void down(int i) {
            WorkerLoad w = items[i];
            while (true) {
                int c = 2 * i + 1;
                if (c >= size) {
                    break;
                }
                if (c + 1 < size && less(items[c + 1], items[c])) {
                    c++;
                }
                if (!less(items[c], w)) {
                    break;
                }
                place(items[c], i);
                i = c;
            }
            place(w, i);
        }

        private void place(WorkerLoad w, int i) {
            items[i] = w;
            w.heapPos = i;
        }
    }
}
