package io.kvprefix.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.internal.ffi.KvpBindings;

/**
 * A tiny program for loader tests run in a child JVM: prints the implementation in use and the
 * local hash of tokens [1,2,3,4] (with {@code --calls}: whether the loaded library counts kernel calls).
 *
 * <p>Thread-safety: a program entry point.
 */
public final class HashMain {
    private HashMain() {}

    public static void main(String[] args) {
        BlockHasher h = BlockHasher.of(4);
        String line = h.implementation() + " " + Long.toUnsignedString(h.localHashes(new int[] {1, 2, 3, 4})[0]);
        if (args.length > 0 && args[0].equals("--calls")) { // does the loaded library count calls?
            line += " calls=" + (KvpBindings.threadCalls() == KvpBindings.NOT_COUNTED ? "not-counted" : "counted");
        }
        System.out.println(line);
    }
}
