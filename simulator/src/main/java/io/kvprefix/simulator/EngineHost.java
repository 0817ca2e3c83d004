package io.kvprefix.simulator;

import io.kvprefix.KvEvent;
import io.kvprefix.workload.AdmitResult;
import java.util.List;

/**
 * What an {@link Engine} needs from whoever drives it: a clock, timers, and ears for what it does. The
 * simulator is one host (simulated time, a timer queue); a stand-in engine process is another (a
 * scaled wall clock and a scheduled executor).
 *
 * <p>Thread-safety: the engine calls its host from the one thread that drives it, and only from there
 * (inside {@link Engine#submit}, {@link Engine#abort} or a timer's action); the host runs every timer's
 * action on that same thread.
 */
public interface EngineHost {
    /** The time now, nanoseconds on the host's clock (any origin; it never goes back). */
    long now();

    /**
     * Runs {@code action} at time {@code at} (not before now; a time in the past means now). Actions due
     * at the same time run in the order they were scheduled.
     */
    void schedule(long at, Runnable action);

    /**
     * The engine published {@code events} now, in the order an index must apply them; they concern
     * {@code source}'s admission. A {@link KvEvent.Stored} among them covers {@code source}'s full blocks
     * from {@code firstBlock} on, as many as it names ({@code firstBlock} is -1 when none is stored).
     */
    void publish(EngineRequest source, int firstBlock, List<KvEvent> events);

    /** The engine admitted {@code r} now: it looked up its cached prefix and cached the rest ({@code a}). */
    default void admitted(EngineRequest r, AdmitResult a) {}

    /** {@code r}'s first output token is out now: its prefill is done. */
    void firstToken(EngineRequest r);

    /** {@code r} has {@code tokens} more output tokens now, after its first ({@link EngineRequest#outputSoFar()}). */
    default void decoded(EngineRequest r, int tokens) {}

    /** {@code r} finished now; its blocks are released (cached, evictable). */
    void finished(EngineRequest r);
}
