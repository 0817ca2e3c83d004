package io.kvprefix.internal.heap;

import io.kvprefix.internal.Explanations;
import io.kvprefix.internal.hash.PortableHashKernel;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import net.openhft.hashing.LongHashFunction;

/**
 * The heap index's side of {@code PrefixIndex.explain}: the request's entries position by position as
 * far as they exist; a worker's depth is where its reach bits end, and its hole ends at the first
 * later entry it holds. Only the workers' GPU views are probed (section 4.1 is about GPU depths).
 *
 * <p>Thread-safety: stateless; the caller holds the index's read lock.
 */
final class HeapExplainer {
    private HeapExplainer() {}

    /**
     * Every known worker's walk over {@code q} under {@code ix}'s read lock: the request's entries
     * position by position as far as they exist; a worker's depth is where its reach bits end, and
     * its hole ends at the first later entry it holds.
     */
    static List<Explanations.Probe> probeLocked(HeapPrefixIndex ix, long[] q) {
        long stamp = ix.lock.readLock();
        try {
            ix.checkOpen();
            return probe(ix.table, ix.chainFn, ix.workers.values(), q);
        } finally {
            ix.lock.unlockRead(stamp);
        }
    }

    static List<Explanations.Probe> probe(
            Long2ObjectOpenHashMap<HeapEntry> table,
            LongHashFunction chainFn,
            Collection<WorkerState> workers,
            long[] q) {
        List<HeapEntry> path = new ArrayList<>();
        long chain = 0;
        for (int p = 0; p < q.length; p++) {
            chain = p == 0 ? q[0] : PortableHashKernel.chainStep(chainFn, chain, q[p], new long[2]);
            HeapEntry e = HeapMatcher.inChain(table.get(HeapMatcher.key(p, q[p])), p, q[p], chain);
            if (e == null) {
                break;
            }
            path.add(e);
        }
        List<Explanations.Probe> out = new ArrayList<>(workers.size());
        for (WorkerState ws : workers) {
            int depth = 0;
            while (depth < path.size() && path.get(depth).reaches(ws.slot)) {
                depth++;
            }
            int resumes = -1;
            for (int p = depth + 1; p < path.size() && resumes < 0; p++) {
                if (ws.held.containsKey(path.get(p))) {
                    resumes = p;
                }
            }
            out.add(new Explanations.Probe(ws.worker, depth, resumes));
        }
        return out;
    }
}
