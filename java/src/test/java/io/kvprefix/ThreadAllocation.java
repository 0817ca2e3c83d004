package io.kvprefix;

import java.lang.reflect.Method;

/**
 * HotSpot's per-thread allocation counter, reached reflectively: the tests are compiled inside the
 * {@code io.kvprefix} module, which does not read {@code jdk.management}.
 *
 * <p>Thread-safety: immutable; {@link #bytes} counts the calling thread.
 */
final class ThreadAllocation {
    private final Object bean;
    private final Method counter;

    private ThreadAllocation(Object bean, Method counter) {
        this.bean = bean;
        this.counter = counter;
    }

    /** The counter, or null where this JVM has none. */
    static ThreadAllocation counter() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory")
                    .getMethod("getThreadMXBean")
                    .invoke(null);
            Method counter =
                    Class.forName("com.sun.management.ThreadMXBean").getMethod("getThreadAllocatedBytes", long.class);
            return counter.getDeclaringClass().isInstance(bean) ? new ThreadAllocation(bean, counter) : null;
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** Bytes the calling thread has allocated so far. */
    long bytes() throws ReflectiveOperationException {
        return (long) counter.invoke(bean, Thread.currentThread().threadId());
    }
}
