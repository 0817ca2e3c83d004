package io.kvprefix.simulator;

import io.kvprefix.KvEvent;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.MockEngine;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;

/**
 * One vLLM-like inference engine on an abstract clock: a {@link MockEngine} prefix cache, a queue of
 * waiting requests and a scheduler ({@link EngineModel}) that turns them into prefill and decode time.
 * It tells its {@link EngineHost} what it does and asks it for timers. The package description
 * (<i>The engine model</i>) has the step rules, the events and the calls.
 *
 * <p>Thread-safety: not thread-safe; confined to one thread, the one its host runs timers on.
 */
public abstract class Engine {
    final MockEngine cache;
    /** Tokens per block of the cache (and of the requests' blocks). */
    final int tokensPerBlock;

    final EngineHost host;
    final EngineSettings settings;
    /** How many times slower than the settings' speeds this engine runs (1 = as set). */
    final double slowness;

    final ArrayDeque<EngineRequest> waiting = new ArrayDeque<>();

    Engine(EngineSettings settings, MockEngine cache, EngineHost host) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.cache = Objects.requireNonNull(cache, "cache");
        this.host = Objects.requireNonNull(host, "host");
        this.tokensPerBlock = cache.tokensPerBlock();
        this.slowness = settings.slowness();
    }

    /** A new idle engine of {@code settings}' model over {@code cache}, driven by {@code host}. */
    public static Engine create(EngineSettings settings, MockEngine cache, EngineHost host) {
        return switch (settings.model()) {
            case VLLM_CHUNKED -> new ChunkedEngine(settings, cache, host);
            case ONE_AT_A_TIME -> new SerialEngine(settings, cache, host);
        };
    }

    /**
     * {@code r} arrives now: it waits to be scheduled.
     *
     * @throws IllegalStateException if {@code r} was submitted before
     */
    public final void submit(EngineRequest r) {
        if (r.state != EngineRequest.NEW) {
            throw new IllegalStateException("request #" + r.trace().index() + " was submitted before");
        }
        r.state = EngineRequest.WAITING;
        enqueue(r);
    }

    /**
     * Aborts {@code r} now (a client went away): a waiting request leaves the queue; a running one
     * releases its blocks, and the events of its admission not yet published are published now (its
     * blocks stay cached, so an index that follows the events matches the cache). No callback for
     * {@code r} follows.
     *
     * @return true if {@code r} was waiting or running here, false if it was done or never submitted
     */
    public final boolean abort(EngineRequest r) {
        if (r.state == EngineRequest.WAITING && waiting.remove(r)) {
            r.state = EngineRequest.DONE;
            return true;
        }
        if (r.state != EngineRequest.RUNNING || !drop(r)) {
            return false;
        }
        publishRest(r);
        cache.release(r.trace());
        r.state = EngineRequest.DONE;
        afterAbort();
        return true;
    }

    /** The engine's cache. */
    public final MockEngine cache() {
        return cache;
    }

    /** The engine's settings. */
    public final EngineSettings settings() {
        return settings;
    }

    /** Requests waiting to be scheduled (vLLM's {@code num_requests_waiting}). */
    public final int waitingRequests() {
        return waiting.size();
    }

    /** Requests admitted and not finished (vLLM's {@code num_requests_running}). */
    public abstract int runningRequests();

    /** Fraction of the cache's blocks pinned by running requests (vLLM's {@code kv_cache_usage_perc}). */
    public final double kvUsage() {
        return (double) cache.inUseBlocks() / cache.capacity();
    }

    /** {@code r} was just queued in {@link #waiting}. */
    abstract void enqueue(EngineRequest r);

    /** Forgets running request {@code r}; false if it is not running here. */
    abstract boolean drop(EngineRequest r);

    /** After an abort freed room: schedules what waits, if the engine is idle. */
    abstract void afterAbort();

    final long nanos(double seconds) {
        return Math.round(seconds * slowness * 1e9);
    }

    /**
     * Admits {@code r} into the cache: its cached prefix, its evictions and stores, its events kept for
     * later. Blocks its CPU tier gives back count as cached (loaded, not computed); the time to load them
     * is {@link #onloadSeconds}.
     */
    final AdmitResult admit(EngineRequest r) {
        AdmitResult a = cache.admit(r.trace());
        r.state = EngineRequest.RUNNING;
        r.gpuCachedBlocks = a.cachedBlocks();
        r.loadedBlocks = a.lowerTierBlocks();
        r.cachedTokens = (long) (a.cachedBlocks() + a.lowerTierBlocks()) * tokensPerBlock;
        r.admission = a.events();
        host.admitted(r, a);
        return a;
    }

    /** Seconds to load {@code r}'s blocks back from the CPU tier. */
    final double onloadSeconds(EngineRequest r) {
        return (double) r.loadedBlocks * tokensPerBlock / settings.onloadTokensPerS();
    }

    /** {@code r} is done now: its blocks are released, the host hears of it. */
    final void finish(EngineRequest r) {
        cache.release(r.trace());
        r.state = EngineRequest.DONE;
        host.finished(r);
    }

    /** Publishes every event of {@code r}'s admission not published yet. */
    abstract void publishRest(EngineRequest r);

    /** Publishes {@code events} of {@code r}'s admission, whose stored event (if any) starts at {@code firstBlock}. */
    final void publish(EngineRequest r, int firstBlock, List<KvEvent> events) {
        if (!events.isEmpty()) {
            host.publish(r, firstBlock, events);
        }
    }
}
