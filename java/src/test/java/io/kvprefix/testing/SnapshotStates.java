package io.kvprefix.testing;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Index states for the snapshot tests: seeded random event streams over shared documents (so
 * workers share prefixes), with stores that continue a worker's own blocks, removals of middle
 * blocks (held descendants become unreachable), stores of the same content under more names, names
 * moved to other blocks, clears and removed workers, lower tiers (copies of held names to CPU or
 * disk, stores straight to them, removals from them: docs/SPEC.md section 3.1); and a fingerprint of
 * everything an index answers about its state (matches with any-tier depths, explanations), to compare a restored index with the one it was saved from.
 *
 * <p>Thread-safety: not thread-safe; one instance per test thread.
 */
public final class SnapshotStates {
    private final SplittableRandom r;
    private final long[][] docs;
    private final int workers;
    /** Per worker: engine hash of (doc, position), for the names it stored last. */
    private final List<Map<Long, Long>> names = new ArrayList<>();

    private long nextName = 1;

    /** Streams over {@code docCount} documents of up to {@code maxLength} blocks for {@code workers} workers. */
    public SnapshotStates(long seed, int workers, int docCount, int maxLength) {
        this.r = new SplittableRandom(seed);
        this.workers = workers;
        this.docs = new long[docCount][];
        for (int d = 0; d < docCount; d++) {
            docs[d] = new long[1 + r.nextInt(maxLength)];
            for (int i = 0; i < docs[d].length; i++) {
                // a small alphabet, so that local hashes repeat at other positions and under other prefixes
                docs[d][i] = i < 2 ? r.nextLong(1, 4) : r.nextLong(1, 1 << 20);
            }
        }
        for (int w = 0; w < workers; w++) {
            names.add(new HashMap<>());
        }
    }

    private static Worker worker(int w) {
        return Worker.of(1000 + w / 2, w % 2);
    }

    /** The next {@code n} events. */
    public List<KvEvent> events(int n) {
        List<KvEvent> out = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            out.add(next());
        }
        return out;
    }

    private KvEvent next() {
        int w = r.nextInt(workers);
        int roll = r.nextInt(1000);
        if (roll < 3) {
            names.get(w).clear();
            return new KvEvent.Cleared(worker(w));
        }
        if (roll < 5) {
            names.get(w & ~1).clear();
            names.get(Math.min(workers - 1, w | 1)).clear();
            return new KvEvent.RemoveWorker(worker(w).workerId());
        }
        if (roll < 60 && !names.get(w).isEmpty()) {
            return copy(w);
        }
        if (roll < 250 && !names.get(w).isEmpty()) {
            return removal(w);
        }
        return store(w);
    }

    /**
     * Events that store every document whole for every worker under fresh names, and copy every
     * third one to a lower tier: name maps (and any-tier views) large enough to have many segments.
     */
    public List<KvEvent> fill() {
        List<KvEvent> out = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            for (int d = 0; d < docs.length; d++) {
                long[] hashes = new long[docs[d].length];
                for (int i = 0; i < hashes.length; i++) {
                    hashes[i] = nextName++;
                    names.get(w).put((long) d << 20 | i, hashes[i]);
                }
                out.add(new KvEvent.Stored(worker(w), OptionalLong.empty(), hashes, docs[d].clone(), Medium.GPU));
                if (d % 3 == 0) {
                    out.add(new KvEvent.Copied(worker(w), hashes, lowerTier()));
                }
            }
        }
        return out;
    }

    /** A lower tier (docs/SPEC.md section 3.1), CPU or disk. */
    private Medium lowerTier() {
        return r.nextBoolean() ? Medium.CPU : Medium.DISK;
    }

    /** A lower tier now also holds some of the worker's names (and now and then one it does not hold). */
    private KvEvent copy(int w) {
        List<Long> held = new ArrayList<>(names.get(w).values());
        long[] hashes = new long[1 + r.nextInt(Math.min(8, held.size()))];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = r.nextInt(30) == 0 ? nextName++ : held.get(r.nextInt(held.size()));
        }
        return new KvEvent.Copied(worker(w), hashes, lowerTier());
    }

    private KvEvent removal(int w) {
        Map<Long, Long> mine = names.get(w);
        List<Long> keys = new ArrayList<>(mine.keySet());
        int n = 1 + r.nextInt(Math.min(4, keys.size()));
        long[] hashes = new long[n];
        for (int i = 0; i < n; i++) {
            Long e = mine.remove(keys.get(r.nextInt(keys.size())));
            hashes[i] = e == null ? nextName++ : e; // a name removed twice, or never stored: block_not_found
        }
        return new KvEvent.Removed(worker(w), hashes, r.nextInt(6) == 0 ? lowerTier() : Medium.GPU);
    }

    private KvEvent store(int w) {
        int d = r.nextInt(docs.length);
        long[] doc = docs[d];
        int from = r.nextInt(3) == 0 ? 0 : r.nextInt(doc.length);
        int to = Math.min(doc.length, from + 1 + r.nextInt(24));
        long[] locals = new long[to - from];
        long[] hashes = new long[to - from];
        Map<Long, Long> mine = names.get(w);
        for (int i = from; i < to; i++) {
            locals[i - from] = doc[i];
            long key = (long) d << 20 | i;
            long e = r.nextInt(20) == 0 && !mine.isEmpty()
                    ? mine.values().iterator().next()
                    : nextName++;
            hashes[i - from] = e;
            mine.put(key, e);
        }
        Medium medium = r.nextInt(8) == 0 ? lowerTier() : Medium.GPU; // a store straight to a lower tier
        if (from == 0) {
            return new KvEvent.Stored(worker(w), OptionalLong.empty(), hashes, locals, medium);
        }
        Long parent = mine.get((long) d << 20 | (from - 1));
        return new KvEvent.Stored(
                worker(w), OptionalLong.of(parent == null ? nextName++ : parent), hashes, locals, medium);
    }

    /** A match request: a random stretch from the start of a random document. */
    public long[] query() {
        long[] doc = docs[r.nextInt(docs.length)];
        return java.util.Arrays.copyOf(doc, 1 + r.nextInt(doc.length));
    }

    /** Applies {@code events} to every index given. */
    public static void apply(List<KvEvent> events, PrefixIndex... indexes) {
        for (KvEvent e : events) {
            for (PrefixIndex i : indexes) {
                i.apply(e);
            }
        }
    }

    /**
     * Everything the index answers about its state: a match of every document and of random
     * stretches of them, the workers, each one's block count, the event counters and the (worker,
     * block) pairs held. Not the table's entries: a restore into the other implementation stores
     * the same blocks differently.
     */
    public String fingerprint(PrefixIndex index) {
        StringBuilder sb = new StringBuilder();
        MatchResult m = new MatchResult();
        SplittableRandom q = new SplittableRandom(docs.length);
        for (long[] doc : docs) {
            for (int len : new int[] {doc.length, 1 + q.nextInt(doc.length)}) {
                index.match(doc, 0, len, m);
                m.sortByWorker();
                sb.append(m.scores()).append('\n'); // with every worker's any-tier depth
                sb.append(index.explain(doc, 0, len)).append('\n');
            }
        }
        List<Worker> ws = index.workers();
        sb.append(ws).append('\n');
        Map<Worker, Long> counts = new TreeMap<>();
        for (Worker w : ws) {
            counts.put(w, index.blockCount(w));
        }
        sb.append(counts).append('\n');
        for (EventStatus s : EventStatus.values()) {
            sb.append(s.wireName()).append('=').append(index.eventCount(s)).append(' ');
        }
        IndexStats st = index.stats();
        sb.append("\nblocks=").append(st.blocks()).append(" workers=").append(st.workers());
        return sb.toString();
    }
}
