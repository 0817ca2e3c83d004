package io.kvprefix.cli.internal.sim;

import io.kvprefix.KvEvent;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.MockEngine;
import java.util.ArrayDeque;
import java.util.List;

/**
 * One simulated inference engine: a {@link MockEngine} prefix cache, a queue of waiting requests and
 * a scheduler that turns them into prefill and decode time ({@link Serial} or {@link Chunked}, see
 * {@link SimSettings.EngineModel}). It tells its {@link Host} when a request gets its first token,
 * when it finishes and which KV events it publishes, and asks the host for timers.
 *
 * <p>Thread-safety: not thread-safe; driven by the simulation thread.
 */
abstract class SimEngine {
    /** What an engine needs from the simulation. */
    interface Host {
        /** Simulated time, nanoseconds. */
        long now();

        /** Runs {@code action} at simulated time {@code at} (not before now). */
        void schedule(long at, Runnable action);

        /** The engine published {@code events} now (the host delivers them after the event delay). */
        void publish(List<KvEvent> events);

        /** The engine admitted {@code r} (it looked up its cached prefix). */
        void admitted(SimRequest r, AdmitResult a);

        /** {@code r}'s first token is out now. */
        void firstToken(SimRequest r);

        /** {@code r} finished now (its blocks are released). */
        void finished(SimRequest r);
    }

    final int index;
    final MockEngine cache;
    /** Tokens per block of the trace (and of the engine's cache). */
    final int tokensPerBlock;

    final Host host;
    final SimSettings settings;
    /** How many times slower than the settings say this engine runs (1 = as set). */
    final double slowness;

    final ArrayDeque<SimRequest> waiting = new ArrayDeque<>();

    SimEngine(int index, MockEngine cache, int tokensPerBlock, Host host, SimSettings settings, double slowness) {
        this.index = index;
        this.cache = cache;
        this.tokensPerBlock = tokensPerBlock;
        this.host = host;
        this.settings = settings;
        this.slowness = slowness;
    }

    /** A new engine of the settings' model. */
    static SimEngine create(
            int index, MockEngine cache, int tokensPerBlock, Host host, SimSettings s, double slowness) {
        return switch (s.engine()) {
            case VLLM_CHUNKED -> new Chunked(index, cache, tokensPerBlock, host, s, slowness);
            case ONE_AT_A_TIME -> new Serial(index, cache, tokensPerBlock, host, s, slowness);
        };
    }

    /** {@code r} arrives at this engine now. */
    abstract void enqueue(SimRequest r);

    /** Requests waiting to be scheduled (vLLM's {@code num_requests_waiting}). */
    int waitingRequests() {
        return waiting.size();
    }

    /** Requests admitted and not finished (vLLM's {@code num_requests_running}). */
    abstract int runningRequests();

    /** Fraction of the cache's blocks pinned by running requests (vLLM's {@code kv_cache_usage_perc}). */
    double kvUsage() {
        return (double) cache.inUseBlocks() / cache.capacity();
    }

    final long nanos(double seconds) {
        return Math.round(seconds * slowness * 1e9);
    }

    /**
     * Admits {@code r} into the cache: its cached prefix, its evictions and stores, its events kept for
     * later. Blocks its CPU tier gives back count as cached (loaded, not computed); the time to load them
     * is {@link #onloadSeconds}.
     */
    final AdmitResult admit(SimRequest r) {
        AdmitResult a = cache.admit(r.trace);
        r.gpuCachedBlocks = a.cachedBlocks();
        r.loadedBlocks = a.lowerTierBlocks();
        r.cachedTokens = (long) (a.cachedBlocks() + a.lowerTierBlocks()) * tokensPerBlock;
        r.admission = a.events();
        host.admitted(r, a);
        return a;
    }

    /** Seconds to load {@code r}'s blocks back from the CPU tier. */
    final double onloadSeconds(SimRequest r) {
        return (double) r.loadedBlocks * tokensPerBlock / settings.onloadTokensPerS();
    }

    /**
     * One prefill at a time, first come first served, at the prefill rate; decode beside it at the
     * decode rate per request. The admission's events are published when the prefill ends.
     */
    static final class Serial extends SimEngine {
        private SimRequest prefilling;
        private int decoding;

        Serial(int index, MockEngine cache, int tokensPerBlock, Host host, SimSettings s, double slowness) {
            super(index, cache, tokensPerBlock, host, s, slowness);
        }

        @Override
        void enqueue(SimRequest r) {
            waiting.add(r);
            if (prefilling == null) {
                start();
            }
        }

        @Override
        int runningRequests() {
            return (prefilling == null ? 0 : 1) + decoding;
        }

        private void start() {
            SimRequest r = waiting.poll();
            prefilling = r;
            admit(r);
            long uncached = Math.max(0, r.trace.inputLength() - r.cachedTokens);
            host.schedule(
                    host.now() + nanos(uncached / settings.prefillTokensPerS() + onloadSeconds(r)),
                    () -> prefillDone(r));
        }

        private void prefillDone(SimRequest r) {
            host.publish(r.admission);
            r.admission = null;
            host.firstToken(r);
            decoding++;
            host.schedule(host.now() + nanos(r.trace.outputLength() / settings.decodeTokensPerS()), () -> {
                decoding--;
                cache.release(r.trace);
                host.finished(r);
            });
            prefilling = null;
            if (!waiting.isEmpty()) {
                start();
            }
        }
    }

    /**
     * vLLM V1's scheduler with chunked prefill (SimSettings' class comment has the step rule). A
     * request is admitted (its cached prefix looked up, its blocks stored) when it is first scheduled;
     * after each step the engine publishes the blocks that step completed, with the admission's
     * evictions in the first chunk's batch.
     */
    static final class Chunked extends SimEngine {
        /** Runs of decode-only steps on (tests turn it off to check that runs change no result). */
        static volatile boolean decodeRuns = true;

        private final java.util.ArrayList<SimRequest> running = new java.util.ArrayList<>();
        private boolean stepping;
        /** A run of identical decode-only steps in progress: its start, step length and step count (0: none). */
        private long runStart;

        private long runStepNs;
        private int runSteps;
        /** Bumped to cancel the timer of a run of decode steps that an arrival cut short. */
        private int generation;

        Chunked(int index, MockEngine cache, int tokensPerBlock, Host host, SimSettings s, double slowness) {
            super(index, cache, tokensPerBlock, host, s, slowness);
        }

        @Override
        void enqueue(SimRequest r) {
            waiting.add(r);
            if (!stepping) {
                step();
            } else if (runSteps > 0) {
                // cut the run of decode steps short at the end of the step in progress
                int done = (int) ((host.now() - runStart) / runStepNs) + 1;
                if (done < runSteps) {
                    runSteps = done;
                    int g = ++generation;
                    host.schedule(runStart + done * runStepNs, () -> runDone(g, done));
                }
            }
        }

        @Override
        int runningRequests() {
            return running.size();
        }

        /**
         * Schedules the next step. When every running request is decoding and nothing waits, the steps
         * until the first of them finishes are all alike: they are scheduled as one run (exactly the
         * same times as stepping one by one), which an arrival cuts short at the next step boundary.
         */
        private void step() {
            int budget = settings.maxBatchedTokens();
            if (decodeRuns && waiting.isEmpty() && running.size() <= budget && allDecoding()) {
                int k = Integer.MAX_VALUE;
                for (SimRequest r : running) {
                    k = Math.min(k, r.outputLeft);
                }
                stepping = true;
                runStart = host.now();
                runStepNs = nanos(1.0 / settings.decodeTokensPerS() + running.size() / settings.prefillTokensPerS());
                runSteps = k;
                int g = ++generation;
                int steps = k;
                host.schedule(runStart + k * runStepNs, () -> runDone(g, steps));
                return;
            }
            long tokens = 0;
            for (SimRequest r : running) {
                int want = r.prefillLeft > 0 ? (int) Math.min(r.prefillLeft, Integer.MAX_VALUE) : 1;
                r.chunk = Math.min(want, budget);
                budget -= r.chunk;
                tokens += r.chunk;
            }
            double onload = 0;
            while (budget > 0 && !waiting.isEmpty() && running.size() < settings.maxNumSeqs()) {
                SimRequest r = waiting.poll();
                admit(r);
                onload += onloadSeconds(r);
                r.computed = r.cachedTokens;
                // vLLM computes at least the last prompt token even when everything is cached
                r.prefillLeft = Math.max(1, r.trace.inputLength() - r.cachedTokens);
                r.chunk = (int) Math.min(r.prefillLeft, budget);
                budget -= r.chunk;
                tokens += r.chunk;
                running.add(r);
            }
            stepping = true;
            // loading a new request's blocks back from the CPU tier holds its first step up
            double seconds = 1.0 / settings.decodeTokensPerS() + tokens / settings.prefillTokensPerS() + onload;
            host.schedule(host.now() + nanos(seconds), this::stepDone);
        }

        private boolean allDecoding() {
            for (SimRequest r : running) {
                if (r.prefillLeft > 0) {
                    return false;
                }
            }
            return true;
        }

        /** The end of a run of {@code steps} decode-only steps (ignored if a later timer replaced it). */
        private void runDone(int g, int steps) {
            if (g != generation) {
                return;
            }
            stepping = false;
            runSteps = 0;
            int kept = 0;
            for (int i = 0; i < running.size(); i++) {
                SimRequest r = running.get(i);
                r.outputLeft -= steps;
                if (r.outputLeft <= 0) {
                    cache.release(r.trace);
                    host.finished(r);
                    continue;
                }
                running.set(kept++, r);
            }
            running.subList(kept, running.size()).clear();
            if (!running.isEmpty() || !waiting.isEmpty()) {
                step();
            }
        }

        private void stepDone() {
            stepping = false;
            int kept = 0;
            for (int i = 0; i < running.size(); i++) {
                SimRequest r = running.get(i);
                if (r.chunk > 0 && !advance(r)) {
                    continue; // finished
                }
                running.set(kept++, r);
            }
            running.subList(kept, running.size()).clear();
            if (!running.isEmpty() || !waiting.isEmpty()) {
                step();
            }
        }

        /** Applies {@code r}'s chunk of the step just done; false if {@code r} finished. */
        private boolean advance(SimRequest r) {
            int chunk = r.chunk;
            r.chunk = 0;
            if (r.prefillLeft > 0) {
                r.prefillLeft -= chunk;
                r.computed += chunk;
                publishComputed(r);
                if (r.prefillLeft > 0) {
                    return true;
                }
                host.firstToken(r);
                r.outputLeft = r.trace.outputLength() - 1; // the prefill step samples the first token
            } else {
                r.outputLeft--;
            }
            if (r.outputLeft > 0) {
                return true;
            }
            cache.release(r.trace);
            host.finished(r);
            return false;
        }

        /** Publishes the admission's evictions (with the first chunk) and the stored blocks the prompt now covers. */
        private void publishComputed(SimRequest r) {
            List<KvEvent> admission = r.admission;
            if (admission == null) {
                return;
            }
            java.util.ArrayList<KvEvent> out = new java.util.ArrayList<>(2);
            KvEvent.Stored stored = null;
            for (KvEvent e : admission) {
                if (e instanceof KvEvent.Stored s) {
                    stored = s;
                } else if (!r.removalsPublished) {
                    out.add(e);
                }
            }
            r.removalsPublished = true;
            int total = stored == null ? 0 : stored.blockHashes().length;
            // the stored event starts after the GPU hit: blocks loaded from the CPU come first in it
            int covered = (int) Math.min(total, r.computed / tokensPerBlock - r.gpuCachedBlocks);
            if (covered > r.publishedBlocks) {
                out.add(slice(stored, r.publishedBlocks, covered));
                r.publishedBlocks = covered;
            }
            if (r.publishedBlocks == total) {
                r.admission = null;
            }
            if (!out.isEmpty()) {
                host.publish(out);
            }
        }

        private static KvEvent.Stored slice(KvEvent.Stored s, int from, int to) {
            if (from == 0 && to == s.blockHashes().length) {
                return s;
            }
            long[] e = java.util.Arrays.copyOfRange(s.blockHashes(), from, to);
            long[] l = java.util.Arrays.copyOfRange(s.localHashes(), from, to);
            return from == 0
                    ? new KvEvent.Stored(s.worker(), s.parentHash(), e, l)
                    : KvEvent.Stored.after(s.worker(), s.blockHashes()[from - 1], e, l);
        }
    }
}
