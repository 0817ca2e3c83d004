package io.kvprefix.simulator;

import io.kvprefix.KvEvent;
import io.kvprefix.workload.MockEngine;
import java.util.List;

/**
 * {@link EngineModel#ONE_AT_A_TIME}: one prefill at a time, first come first served, at the prefill
 * rate; decode beside it at the decode rate per request. The admission's events are published when
 * the prefill ends; the output tokens after the first are reported when the request finishes.
 *
 * <p>Thread-safety: not thread-safe, as {@link Engine}.
 */
final class SerialEngine extends Engine {
    private EngineRequest prefilling;
    private int decoding;

    SerialEngine(EngineSettings settings, MockEngine cache, EngineHost host) {
        super(settings, cache, host);
    }

    @Override
    void enqueue(EngineRequest r) {
        waiting.add(r);
        if (prefilling == null) {
            start();
        }
    }

    @Override
    public int runningRequests() {
        return (prefilling == null ? 0 : 1) + decoding;
    }

    private void start() {
        EngineRequest r = waiting.poll();
        prefilling = r;
        admit(r);
        long uncached = Math.max(0, r.inputTokens() - r.cachedTokens);
        host.schedule(
                host.now() + nanos(uncached / settings.prefillTokensPerS() + onloadSeconds(r)), () -> prefillDone(r));
    }

    private void prefillDone(EngineRequest r) {
        if (prefilling != r) {
            return; // aborted
        }
        publishRest(r);
        r.outputSoFar = 1;
        host.firstToken(r);
        decoding++;
        host.schedule(host.now() + nanos(r.outputTokens() / settings.decodeTokensPerS()), () -> decodeDone(r));
        prefilling = null;
        if (!waiting.isEmpty()) {
            start();
        }
    }

    private void decodeDone(EngineRequest r) {
        if (r.state != EngineRequest.RUNNING) {
            return; // aborted
        }
        decoding--;
        int rest = Math.max(1, r.outputTokens()) - r.outputSoFar;
        if (rest > 0) {
            r.outputSoFar += rest;
            host.decoded(r, rest);
        }
        finish(r);
    }

    @Override
    boolean drop(EngineRequest r) {
        if (prefilling == r) {
            prefilling = null;
        } else {
            decoding--;
        }
        return true;
    }

    @Override
    void afterAbort() {
        if (prefilling == null && !waiting.isEmpty()) {
            start();
        }
    }

    @Override
    void publishRest(EngineRequest r) {
        List<KvEvent> events = r.admission;
        r.admission = null;
        if (events == null) {
            return;
        }
        boolean stored = false;
        for (KvEvent e : events) {
            stored |= e instanceof KvEvent.Stored;
        }
        publish(r, stored ? r.gpuCachedBlocks : -1, events);
    }
}
