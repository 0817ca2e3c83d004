package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.block;
import static io.kvprefix.internal.offheap.ChainLayout.entryCutoff;
import static io.kvprefix.internal.offheap.ChainLayout.entrySlot;
import static io.kvprefix.internal.offheap.ChainLayout.entryUnreachable;

import io.kvprefix.internal.Explanations;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The off-heap index's side of {@code PrefixIndex.explain}: the match kernel's walk, taken as far as
 * the request's chain exists in the index whoever holds it (the kernel stops where no holder goes
 * on), reading per run every holder's cutoff (its depth) and, past the cutoff, which of the request's
 * blocks it holds without an ancestor (the first of them ends its hole). The held-but-unreachable
 * blocks live in each worker's heap side set, which only its writer touches, so the caller runs this
 * with every writer held out ({@link Generations#withWritersHeldOut}); the walk reads a few words per
 * run and holder and takes no other lock.
 *
 * <p>Locks: takes none; its caller holds every writer out and is inside the reader gate
 * ({@link Generations#withWritersHeldOut}).
 *
 * <p>Thread-safety: stateless; the caller holds the writers out and is inside the read gate.
 */
final class ChainExplainer {
    private ChainExplainer() {}

    /** Probes of {@code workers} for the request {@code q[0 .. len)}. */
    static List<Explanations.Probe> probe(
            ChildTable children, RunArena.RunTable runs, Collection<WorkerHoldings> workers, long[] q, int len) {
        int slots = 0;
        for (WorkerHoldings h : workers) {
            slots = Math.max(slots, h.slot + 1);
        }
        WorkerHoldings[] bySlot = new WorkerHoldings[slots];
        int[] depth = new int[slots];
        int[] resumes = new int[slots];
        for (WorkerHoldings h : workers) {
            bySlot[h.slot] = h;
            resumes[h.slot] = -1;
        }
        int run = len == 0 ? -1 : children.find(-1, q[0]);
        int pos = 0;
        while (run >= 0 && run < runs.capacity()) {
            long a = runs.address(run);
            if (a == 0) {
                break;
            }
            int m = 1 + Runs.matching(a, 1, Runs.length(a), q, pos + 1, len - pos - 1);
            int n = Runs.entryCount(a);
            for (int p = 0; p < n; p++) {
                long e = Mem.getLongAcquire(Runs.entryAddress(a, p));
                int slot = entrySlot(e);
                if (slot < 0 || slot >= slots || bySlot[slot] == null) {
                    continue;
                }
                int cutoff = entryCutoff(e);
                if (cutoff > 0) {
                    depth[slot] = pos + Math.min(cutoff, m); // reach is prefix-closed: the deepest run decides
                }
                if (entryUnreachable(e) > 0 && resumes[slot] < 0) {
                    for (int off = cutoff; off < m; off++) {
                        if (bySlot[slot].isUnreachable(block(run, off))) {
                            resumes[slot] = pos + off;
                            break;
                        }
                    }
                }
            }
            if (pos + m == len) {
                break;
            }
            run = children.find(block(run, m - 1), q[pos + m]);
            pos += m;
        }
        List<Explanations.Probe> out = new ArrayList<>(workers.size());
        for (WorkerHoldings h : workers) {
            out.add(new Explanations.Probe(h.worker, depth[h.slot], resumes[h.slot]));
        }
        return out;
    }
}
