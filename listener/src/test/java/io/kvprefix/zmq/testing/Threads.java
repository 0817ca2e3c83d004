package io.kvprefix.zmq.testing;

import java.util.List;

/**
 * Checks for leaked threads.
 *
 * <p>Thread-safety: stateless.
 */
public final class Threads {
    private Threads() {}

    /** Names of the live threads whose name starts with {@code prefix}. */
    public static List<String> alive(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith(prefix))
                .sorted()
                .toList();
    }

    /** Waits up to {@code millis} for every thread named {@code prefix...} to end; fails naming the survivors. */
    public static void assertNoneAlive(String prefix, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        List<String> left = alive(prefix);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            left = alive(prefix);
        }
        if (!left.isEmpty()) {
            throw new AssertionError("threads still alive after close: " + left);
        }
    }
}
