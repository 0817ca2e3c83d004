package io.kvprefix.internal;

import io.kvprefix.MatchResult;
import io.kvprefix.Worker;

/**
 * How index implementations fill a {@link MatchResult}, whose mutators are not public: the result
 * class registers an instance of this when it is initialised, and implementations fetch it once
 * into a {@code static final} field ({@link #access()}), so the call inlines like a direct one.
 *
 * <p>Thread-safety: the registered instance is stateless and may be used from any thread; a result
 * itself belongs to one thread at a time.
 */
public abstract class MatchResults {
    private static volatile MatchResults instance;

    /** Empties {@code r} for a request of {@code queryBlocks} blocks. */
    public abstract void reset(MatchResult r, int queryBlocks);

    /** Adds {@code worker} with depth {@code depth >= 1} on the GPU and over every tier to {@code r}. */
    public abstract void add(MatchResult r, Worker worker, int depth);

    /** Adds {@code worker} with GPU depth {@code depth >= 0} and any-tier depth {@code anyTierDepth >= 1}. */
    public abstract void add(MatchResult r, Worker worker, int depth, int anyTierDepth);

    /** Raises entry {@code i}'s any-tier depth to at least {@code anyTierDepth}. */
    public abstract void raiseAnyTier(MatchResult r, int i, int anyTierDepth);

    /** Called once by {@link MatchResult}'s class initialiser. */
    public static void register(MatchResults access) {
        if (instance != null) {
            throw new IllegalStateException("already registered");
        }
        instance = access;
    }

    /** The accessor (initialising {@link MatchResult} if needed). */
    public static MatchResults access() {
        MatchResults a = instance;
        if (a == null) {
            try {
                Class.forName(MatchResult.class.getName(), true, MatchResult.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = instance;
        }
        return a;
    }
}
