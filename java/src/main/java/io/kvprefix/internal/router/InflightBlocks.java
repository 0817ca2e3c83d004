package io.kvprefix.internal.router;

import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The blocks of the prefills a router has sent and not yet seen covered (docs/SPEC.md section 6.7):
 * a trie over the requests' local hashes, each node counting, per worker, the credited requests
 * whose path runs through it. A worker's in-flight depth for a request is the deepest node of the
 * request's path that credits it; every credit covers a whole path from the root, so what one worker
 * is credited with is prefix-closed, as an index's holdings are. At most {@code maxBlocks} (worker,
 * block) credits are held at once; a decision that would pass the bound is not credited and counted.
 *
 * <p>Thread-safety: thread-safe; the public methods take its {@link LoadTable}'s lock, the others are
 * called with it held. A node's {@code local} and {@code parent} are final, so a credit's path is read
 * back without the lock ({@link #path}).
 */
public final class InflightBlocks {
    /** The default bound on (worker, block) credits held at once: 2^20, as predicted mode's. */
    public static final long DEFAULT_MAX_BLOCKS = 1L << 20;

    private final Object lock;
    private final Long2ObjectOpenHashMap<Node> roots = new Long2ObjectOpenHashMap<>();
    private final ArrayDeque<InflightPrefill> prefilled = new ArrayDeque<>();
    private final long maxBlocks;
    private long credited;
    private long dropped;

    InflightBlocks(Object lock, long maxBlocks) {
        this.lock = lock;
        this.maxBlocks = maxBlocks;
    }

    /** Credits {@code w} with the path {@code q[0 .. n)}; null (and counted) past the bound, null for no block. */
    InflightPrefill credit(WorkerLoad w, long[] q, int n) {
        if (n == 0) {
            return null;
        }
        if (credited + n > maxBlocks) {
            dropped++;
            return null;
        }
        Node node = roots.get(q[0]);
        if (node == null) {
            node = new Node(null, q[0]);
            roots.put(q[0], node);
        }
        node.add(w);
        for (int i = 1; i < n; i++) {
            node = node.child(q[i]);
            node.add(w);
        }
        credited += n;
        return new InflightPrefill(w, node, n);
    }

    /** Takes a credit back (nothing if it was taken already); nodes no credit passes through are dropped. */
    void release(InflightPrefill p) {
        if (p == null || !p.linked) {
            return;
        }
        p.linked = false;
        credited -= p.blocks;
        for (Node node = p.leaf; node != null; node = node.parent) {
            node.remove(p.load);
            if (node.size == 0 && node.childless()) {
                if (node.parent == null) {
                    roots.remove(node.local);
                } else {
                    node.parent.removeChild(node);
                }
            }
        }
    }

    /** Raises, through {@code t}, every registered holder on the path {@code q[0 .. n)} to its in-flight depth. */
    void walk(long[] q, int n, LoadTable t) {
        Node node = n > 0 ? roots.get(q[0]) : null;
        int depth = 0;
        while (node != null) {
            depth++;
            for (int k = 0; k < node.size; k++) {
                if (!node.holders[k].isRemoved()) {
                    t.raise(node.holders[k], depth);
                }
            }
            if (depth == n) {
                return;
            }
            node = node.get(q[depth]);
        }
    }

    /** Queues a credit whose prefill has finished for the coverage check (once). */
    void prefilled(InflightPrefill p) {
        if (p != null && p.linked && !p.queued) {
            p.queued = true;
            prefilled.addLast(p);
        }
    }

    /**
     * The oldest credit whose prefill has finished and that is still held, moved to the back of the
     * check queue; null if none. The caller matches its {@link #path} against the index outside the
     * lock and calls {@link #covered} if the worker holds it all.
     */
    public InflightPrefill nextToCheck() {
        synchronized (lock) {
            return nextLocked();
        }
    }

    /** Takes {@code p}'s credit back because the index now holds all its blocks on its worker. */
    public void covered(InflightPrefill p) {
        synchronized (lock) {
            release(p);
        }
    }

    private InflightPrefill nextLocked() {
        InflightPrefill p;
        while ((p = prefilled.pollFirst()) != null && !p.linked) {
            p.queued = false;
        }
        if (p != null) {
            prefilled.addLast(p);
        }
        return p;
    }

    /** (worker, block) credits held. */
    public long credited() {
        synchronized (lock) {
            return credited;
        }
    }

    /** Decisions not credited because the bound was reached. */
    public long dropped() {
        synchronized (lock) {
            return dropped;
        }
    }

    /** Writes the path of {@code p} into {@code out[0 .. p.blocks())} (no lock needed: the path's fields are final). */
    public static void path(InflightPrefill p, long[] out) {
        Node node = p.leaf;
        for (int i = p.blocks - 1; i >= 0; i--) {
            out[i] = node.local;
            node = node.parent;
        }
    }

    /**
     * One block of one or more credited paths, with the workers credited through it and how often. A
     * node with one child (the common case: a path no other credit branches from) keeps it in a field;
     * a map is made at the second.
     */
    static final class Node {
        final Node parent;
        final long local;
        Node only;
        Long2ObjectOpenHashMap<Node> children;
        WorkerLoad[] holders = new WorkerLoad[1];
        int[] counts = new int[1];
        int size;

        Node(Node parent, long local) {
            this.parent = parent;
            this.local = local;
        }

        /** The child for {@code l}, made if there is none. */
        Node child(long l) {
            Node c = get(l);
            if (c != null) {
                return c;
            }
            c = new Node(this, l);
            if (children == null && only == null) {
                only = c;
                return c;
            }
            if (children == null) {
                children = new Long2ObjectOpenHashMap<>(4);
                children.put(only.local, only);
                only = null;
            }
            children.put(l, c);
            return c;
        }

        /** The child for {@code l}, or null. */
        Node get(long l) {
            if (children != null) {
                return children.get(l);
            }
            return only != null && only.local == l ? only : null;
        }

        void removeChild(Node c) {
            if (children != null) {
                children.remove(c.local);
            } else if (only == c) {
                only = null;
            }
        }

        boolean childless() {
            return children == null ? only == null : children.isEmpty();
        }

        void add(WorkerLoad w) {
            for (int k = 0; k < size; k++) {
                if (holders[k] == w) {
                    counts[k]++;
                    return;
                }
            }
            if (size == holders.length) {
                holders = Arrays.copyOf(holders, size * 2);
                counts = Arrays.copyOf(counts, size * 2);
            }
            holders[size] = w;
            counts[size++] = 1;
        }

        void remove(WorkerLoad w) {
            for (int k = 0; k < size; k++) {
                if (holders[k] == w) {
                    if (--counts[k] == 0) {
                        holders[k] = holders[--size];
                        counts[k] = counts[size];
                        holders[size] = null;
                    }
                    return;
                }
            }
        }
    }
}
