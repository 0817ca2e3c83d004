package io.kvprefix.testing;

import java.lang.reflect.Method;

/**
 * HotSpot's per-thread allocation counter, reached reflectively: the tests are compiled inside the
 * modules, which do not read {@code jdk.management}; every module's allocation tests share it.
 *
 * <p>Thread-safety: immutable; {@link #bytes} counts the calling thread.
 */
public final class ThreadAllocation {
    private final Object bean;
    private final Method counter;

    private ThreadAllocation(Object bean, Method counter) {
        this.bean = bean;
        this.counter = counter;
    }

    /** The counter, or null where this JVM has none. */
    public static ThreadAllocation counter() {
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
    public long bytes() throws ReflectiveOperationException {
        return (long) counter.invoke(bean, Thread.currentThread().threadId());
    }
}
