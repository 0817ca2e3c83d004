package io.kvprefix.simulator;

import io.kvprefix.KvEvent;
import io.kvprefix.workload.MockEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link EngineModel#VLLM_CHUNKED}: vLLM V1's scheduler with chunked prefill (the package
 * description has the step rule). A request is admitted (its cached prefix looked up, its blocks
 * stored) when it is first scheduled; after each step the engine publishes the blocks that step
 * completed, with the admission's evictions in the first chunk's batch.
 *
 * <p>Thread-safety: not thread-safe, as {@link Engine}.
 */
final class ChunkedEngine extends Engine {
    private final ArrayList<EngineRequest> running = new ArrayList<>();
    private final boolean decodeRuns;
    private boolean stepping;
    /** A run of identical decode-only steps in progress: its start, step length and step count (0: none). */
    private long runStart;

    private long runStepNs;
    private int runSteps;
    /** Bumped to cancel the timer of a run of decode steps that an arrival cut short. */
    private int generation;

    ChunkedEngine(EngineSettings settings, MockEngine cache, EngineHost host) {
        super(settings, cache, host);
        this.decodeRuns = settings.decodeRuns();
    }

    @Override
    void enqueue(EngineRequest r) {
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
    public int runningRequests() {
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
            for (EngineRequest r : running) {
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
        for (EngineRequest r : running) {
            int want = r.prefillLeft > 0 ? (int) Math.min(r.prefillLeft, Integer.MAX_VALUE) : 1;
            r.chunk = Math.min(want, budget);
            budget -= r.chunk;
            tokens += r.chunk;
        }
        double onload = 0;
        while (budget > 0 && !waiting.isEmpty() && running.size() < settings.maxNumSeqs()) {
            EngineRequest r = waiting.poll();
            admit(r);
            onload += onloadSeconds(r);
            r.computed = r.cachedTokens;
            // vLLM computes at least the last prompt token even when everything is cached
            r.prefillLeft = Math.max(1, r.inputTokens() - r.cachedTokens);
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
        for (EngineRequest r : running) {
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
            EngineRequest r = running.get(i);
            r.outputLeft -= steps;
            r.outputSoFar += steps;
            host.decoded(r, steps);
            if (r.outputLeft <= 0) {
                finish(r);
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
            EngineRequest r = running.get(i);
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
    private boolean advance(EngineRequest r) {
        int chunk = r.chunk;
        r.chunk = 0;
        if (r.prefillLeft > 0) {
            r.prefillLeft -= chunk;
            r.computed += chunk;
            publishAdmission(r, false);
            if (r.prefillLeft > 0) {
                return true;
            }
            r.outputSoFar = 1;
            host.firstToken(r);
            r.outputLeft = r.outputTokens() - 1; // the prefill step samples the first token
        } else {
            r.outputLeft--;
            r.outputSoFar++;
            host.decoded(r, 1);
        }
        if (r.outputLeft > 0) {
            return true;
        }
        finish(r);
        return false;
    }

    @Override
    boolean drop(EngineRequest r) {
        r.chunk = 0;
        return running.remove(r);
    }

    @Override
    void afterAbort() {
        if (!stepping && (!running.isEmpty() || !waiting.isEmpty())) {
            step();
        }
    }

    @Override
    void publishRest(EngineRequest r) {
        publishAdmission(r, true);
    }

    /**
     * Publishes the admission's evictions (with the first chunk) and the stored blocks the prompt now
     * covers ({@code all}: every one).
     */
    private void publishAdmission(EngineRequest r, boolean all) {
        List<KvEvent> admission = r.admission;
        if (admission == null) {
            return;
        }
        ArrayList<KvEvent> out = new ArrayList<>(2);
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
        int covered = all ? total : (int) Math.min(total, r.computed / tokensPerBlock - r.gpuCachedBlocks);
        int first = -1;
        if (covered > r.publishedBlocks) {
            out.add(slice(stored, r.publishedBlocks, covered));
            first = r.gpuCachedBlocks + r.publishedBlocks;
            r.publishedBlocks = covered;
        }
        if (r.publishedBlocks == total) {
            r.admission = null;
        }
        publish(r, first, out);
    }

    private static KvEvent.Stored slice(KvEvent.Stored s, int from, int to) {
        if (from == 0 && to == s.blockHashes().length) {
            return s;
        }
        long[] e = Arrays.copyOfRange(s.blockHashes(), from, to);
        long[] l = Arrays.copyOfRange(s.localHashes(), from, to);
        return from == 0
                ? new KvEvent.Stored(s.worker(), s.parentHash(), e, l)
                : KvEvent.Stored.after(s.worker(), s.blockHashes()[from - 1], e, l);
    }
}
