package io.kvprefix.tokenizer.internal.template;

import java.util.ArrayList;
import java.util.List;

/**
 * Python's slice semantics ({@code seq[start:stop:step]}, negative and out-of-range bounds clamped as
 * {@code slice.indices} does): docs/TOKENIZER.md section 3.2.
 *
 * <p>Thread-safety: stateless.
 */
public final class PySlices {
    private PySlices() {}

    /** The indices {@code seq[start:stop:step]} selects from a sequence of {@code n} items, in order. */
    public static int[] indices(int n, Long start, Long stop, Long step) {
        long st = step == null ? 1 : step;
        if (st == 0) {
            throw new IllegalArgumentException("slice step cannot be zero");
        }
        long lo;
        long hi;
        if (st > 0) {
            lo = start == null ? 0 : clamp(start, n, 0, n);
            hi = stop == null ? n : clamp(stop, n, 0, n);
        } else {
            lo = start == null ? n - 1 : clamp(start, n, -1, n - 1);
            hi = stop == null ? -1 : clamp(stop, n, -1, n - 1);
        }
        int count = 0;
        if (st > 0 && hi > lo) {
            count = (int) ((hi - lo + st - 1) / st);
        } else if (st < 0 && lo > hi) {
            count = (int) ((lo - hi + (-st) - 1) / -st);
        }
        int[] out = new int[count];
        for (int k = 0; k < count; k++) {
            out[k] = (int) (lo + k * st);
        }
        return out;
    }

    private static long clamp(long v, int n, long min, long max) {
        long x = v < 0 ? v + n : v;
        return Math.max(min, Math.min(max, x));
    }

    /** {@code list[start:stop:step]}. */
    public static List<Object> slice(List<?> list, Long start, Long stop, Long step) {
        int[] idx = indices(list.size(), start, stop, step);
        List<Object> out = new ArrayList<>(idx.length);
        for (int i : idx) {
            out.add(list.get(i));
        }
        return out;
    }
}
