package io.kvprefix.bench;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.util.SplittableRandom;

/**
 * Setup helpers shared by the JMH states: every setup event must answer ok, workers carry unrelated
 * filler blocks so tables are not trivially small, and a setup's answer is checked against its
 * construction before anything is measured.
 *
 * <p>Thread-safety: stateless.
 */
final class BenchFixtures {
    private BenchFixtures() {}

    /** Throws unless a setup event answered ok. */
    static void ok(EventStatus s) {
        if (s != EventStatus.OK) {
            throw new IllegalStateException("setup event answered " + s);
        }
    }

    /**
     * Stores {@code blocks} unrelated random blocks for {@code worker}, sixteen per sequence, named
     * from {@code nextName} on; returns the next unused name.
     */
    static long filler(PrefixIndex index, Worker worker, int blocks, SplittableRandom r, long nextName) {
        for (int k = 0; k < blocks; k += 16) {
            long[] names = new long[16];
            long[] locals = new long[16];
            for (int i = 0; i < 16; i++) {
                names[i] = nextName++;
                locals[i] = r.nextLong();
            }
            ok(index.apply(KvEvent.Stored.root(worker, names, locals)));
        }
        return nextName;
    }

    /** Throws unless exactly workers {@code 0 .. expected.length-1} matched, worker {@code w} at depth {@code expected[w]}. */
    static void checkDepths(MatchResult m, int[] expected, String what) {
        if (m.size() != expected.length) {
            throw new IllegalStateException(what + ": " + m.size() + " workers matched, expected " + expected.length);
        }
        for (int i = 0; i < m.size(); i++) {
            int w = (int) m.worker(i).workerId();
            if (m.depth(i) != expected[w]) {
                throw new IllegalStateException(
                        what + ": worker " + w + " depth " + m.depth(i) + ", expected " + expected[w]);
            }
        }
    }
}
