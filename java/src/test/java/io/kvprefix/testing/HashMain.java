package io.kvprefix.testing;

import io.kvprefix.BlockHasher;

/**
 * A tiny program for loader tests run in a child JVM: prints the implementation in use and the
 * local hash of tokens [1,2,3,4].
 *
 * <p>Thread-safety: a program entry point.
 */
public final class HashMain {
    private HashMain() {}

    public static void main(String[] args) {
        BlockHasher h = BlockHasher.of(4);
        System.out.println(h.implementation() + " " + Long.toUnsignedString(h.localHashes(new int[] {1, 2, 3, 4})[0]));
    }
}
