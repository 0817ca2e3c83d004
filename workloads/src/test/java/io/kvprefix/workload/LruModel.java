package io.kvprefix.workload;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The simplest model of the mock engine's cache, for tests: blocks are named by their whole prefix
 * (a list of ids), nothing is linked or hashed, and eviction scans for the free block freed longest
 * ago. It knows nothing about engine hashes or events.
 *
 * <p>Thread-safety: not thread-safe.
 */
final class LruModel {
    record Admission(int cached, List<List<Long>> evicted, List<List<Long>> stored, int uncached) {}

    private final int capacity;
    private final Map<List<Long>, Integer> pins = new HashMap<>();
    private final Map<List<Long>, Long> freedAt = new HashMap<>();
    private final Map<Integer, List<List<Long>>> running = new HashMap<>();
    private long clock;

    LruModel(int capacity) {
        this.capacity = capacity;
    }

    static List<Long> prefix(long[] ids, int n) {
        List<Long> p = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            p.add(ids[i]);
        }
        return List.copyOf(p);
    }

    int size() {
        return pins.size();
    }

    int inUse() {
        int n = 0;
        for (int v : pins.values()) {
            if (v > 0) {
                n++;
            }
        }
        return n;
    }

    boolean cached(List<Long> prefix) {
        return pins.containsKey(prefix);
    }

    boolean pinned(List<Long> prefix) {
        return pins.getOrDefault(prefix, 0) > 0;
    }

    Admission admit(int request, long[] ids, int fullBlocks) {
        List<List<Long>> held = new ArrayList<>();
        int cached = 0;
        while (cached < fullBlocks && pins.containsKey(prefix(ids, cached + 1))) {
            List<Long> p = prefix(ids, cached + 1);
            pins.merge(p, 1, Integer::sum);
            freedAt.remove(p);
            held.add(p);
            cached++;
        }
        int toStore = Math.min(fullBlocks - cached, capacity - inUse());
        List<List<Long>> evicted = new ArrayList<>();
        while (pins.size() + toStore > capacity) {
            List<Long> victim = null;
            long oldest = Long.MAX_VALUE;
            for (var e : freedAt.entrySet()) {
                if (e.getValue() < oldest) {
                    oldest = e.getValue();
                    victim = e.getKey();
                }
            }
            if (victim == null) {
                throw new AssertionError("model: nothing to evict");
            }
            freedAt.remove(victim);
            pins.remove(victim);
            evicted.add(victim);
        }
        List<List<Long>> stored = new ArrayList<>();
        for (int i = cached; i < cached + toStore; i++) {
            List<Long> p = prefix(ids, i + 1);
            pins.put(p, 1);
            stored.add(p);
            held.add(p);
        }
        running.put(request, held);
        return new Admission(cached, evicted, stored, fullBlocks - cached - toStore);
    }

    void release(int request) {
        List<List<Long>> held = running.remove(request);
        for (int i = held.size() - 1; i >= 0; i--) {
            List<Long> p = held.get(i);
            int left = pins.merge(p, -1, Integer::sum);
            if (left == 0) {
                freedAt.put(p, ++clock);
            }
        }
    }
}
