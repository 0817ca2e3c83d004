package io.kvprefix.service;

import io.kvprefix.BlockHasher;
import io.kvprefix.RouteExplanation;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.Worker;
import io.kvprefix.service.internal.EngineRegistry;
import io.kvprefix.service.internal.UsageScanner;
import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * One routed request and its lifecycle (the table in this package's description, docs/SERVE.md section
 * 5): where it goes, what the router counted, and the calls a front door makes as the exchange
 * goes on. {@link #firstByte()} ends the request's prefill load ({@link RoutingDecision#prefillFinished()});
 * {@link #completed()}, {@link #failed}, {@link #cancelled()} and {@link #expired()} end all of it
 * ({@link RoutingDecision#finished()}), free its admission slot and count it; whichever comes first
 * wins, the others do nothing. {@link #retry} sends it once more, to the next engine, when the first
 * engine could not be reached before any response byte.
 *
 * <p>Thread-safety: the lifecycle calls are thread-safe and idempotent; the response-byte calls
 * ({@link #responseStarted}, {@link #responseBytes}) must come from one thread at a time, in order
 * (the thread that reads the engine's response).
 */
public final class RoutedRequest {
    private static final int OPEN = 0;
    private static final int STARTED = 1;
    private static final int DONE = 2;

    private final RouterService service;
    private final ClassifiedRequest request;
    private final EngineRegistry.Engine engine;
    private final Router router;
    private final RoutingDecision decision;
    private final BlockHasher hasher;
    private final int[] tokens;
    private final String loadOnlyReason;
    private final AdmissionSlot slot;
    private final Predicate<Worker> among;
    private final boolean retried;
    private final long routedAt = System.nanoTime();
    private final AtomicInteger state = new AtomicInteger(OPEN);
    private volatile long forwardedAt = routedAt;
    private UsageScanner scanner;
    private volatile Usage usage;
    /** Its infinite-cache bound in tokens when it was routed, or -1 (a retry, or not tokenized). */
    private final long boundTokens;

    RoutedRequest(
            RouterService service,
            ClassifiedRequest request,
            EngineRegistry.Engine engine,
            Router router,
            RoutingDecision decision,
            BlockHasher hasher,
            int[] tokens,
            String loadOnlyReason,
            AdmissionSlot slot,
            Predicate<Worker> among,
            boolean retried,
            long boundTokens) {
        this.service = service;
        this.request = request;
        this.engine = engine;
        this.router = router;
        this.decision = decision;
        this.hasher = hasher;
        this.tokens = tokens;
        this.loadOnlyReason = loadOnlyReason;
        this.slot = slot;
        this.among = among;
        this.retried = retried;
        this.boundTokens = boundTokens;
    }

    /** The request as classified. */
    public ClassifiedRequest request() {
        return request;
    }

    /** The engine chosen. */
    public EngineSpec engine() {
        return engine.spec();
    }

    /** The chosen engine's worker. */
    public Worker worker() {
        return decision.worker();
    }

    /** The URL to forward to: the engine's base URL, then {@code pathAndQuery} as the client sent it. */
    public URI target(String pathAndQuery) {
        return URI.create(engine.spec().baseUrl() + pathAndQuery);
    }

    /** The decision the router made (its load, cost and depth). */
    public RoutingDecision decision() {
        return decision;
    }

    /** Leading blocks of the prompt the chosen engine holds, as the index knows (0 when routed by load). */
    public int cachedBlocks() {
        return decision.overlapBlocks();
    }

    /** True if it was routed by cache (its tokens hashed and matched), false if by load alone. */
    public boolean routedByCache() {
        return loadOnlyReason == null;
    }

    /** Why it was routed by load alone ({@code no_tokenizer}, a tokenizer's reason, ...), or null. */
    public String loadOnlyReason() {
        return loadOnlyReason;
    }

    /** True if this is the second try, after the first engine could not be reached. */
    public boolean retried() {
        return retried;
    }

    /**
     * The response headers the front door adds (docs/SERVE.md section 2): {@code x-kvprefix-worker},
     * {@code x-kvprefix-cached-blocks}, {@code x-kvprefix-route} and, for a load-only route,
     * {@code x-kvprefix-route-reason}.
     */
    public Map<String, String> headers() {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("x-kvprefix-worker", worker().toString());
        h.put("x-kvprefix-cached-blocks", Integer.toString(cachedBlocks()));
        h.put("x-kvprefix-route", routedByCache() ? "cache" : "load-only");
        if (!routedByCache()) {
            h.put("x-kvprefix-route-reason", loadOnlyReason);
        }
        return h;
    }

    /**
     * Up to {@code max} other engines, best first, for a retry or an endpoint picker's fallback list:
     * the router's members by their cost now (docs/SPEC.md section 6), the chosen one left out. Costs one
     * {@link Router#explain} (another hash and match); nothing is charged.
     */
    public List<EngineSpec> fallbacks(int max) {
        RouteExplanation x;
        try {
            x = tokens == null
                    ? router.explain(new long[0], request.estimatedTokens())
                    : router.explain(tokens, 0, tokens.length, hasher);
        } catch (IllegalStateException e) {
            return List.of(); // no member left
        }
        List<RouteExplanation.Candidate> c = new ArrayList<>();
        for (RouteExplanation.Candidate k : x.workers()) {
            if (k.verdict() != RouteExplanation.Verdict.NOT_A_MEMBER
                    && !k.worker().equals(worker())
                    && (among == null || among.test(k.worker()))) {
                c.add(k);
            }
        }
        c.sort(Comparator.comparingDouble(RouteExplanation.Candidate::cost));
        List<EngineSpec> out = new ArrayList<>();
        for (RouteExplanation.Candidate k : c) {
            EngineRegistry.Engine e = service.registry().engine(k.worker());
            if (e != null && e.up() && out.size() < max) {
                out.add(e.spec());
            }
        }
        return out;
    }

    /** The request is being forwarded now: the first-byte time is measured from here (default: from routing). */
    public void forwarded() {
        forwardedAt = System.nanoTime();
    }

    /**
     * The engine's first response byte arrived (the first body chunk; a response without a body: its
     * end): the prefill is over. Idempotent.
     */
    public void firstByte() {
        if (state.compareAndSet(OPEN, STARTED)) {
            decision.prefillFinished();
            service.meters().firstByte(worker(), System.nanoTime() - forwardedAt);
        }
    }

    /** True once {@link #firstByte()} was called or the request ended. */
    public boolean started() {
        return state.get() != OPEN;
    }

    /** The engine's response head: its usage is read from an event stream when {@code contentType} is {@code text/event-stream}. */
    public void responseStarted(int status, String contentType) {
        boolean sse = contentType != null
                && contentType.toLowerCase(java.util.Locale.ROOT).startsWith("text/event-stream");
        scanner = status >= 200 && status < 300 ? new UsageScanner(sse) : null;
    }

    /** The next bytes of the engine's response body, as they pass (read for the usage block; never held back). */
    public void responseBytes(byte[] b, int off, int len) {
        if (scanner != null) {
            scanner.feed(b, off, len);
        }
    }

    /** The usage the engine reported, once read, or null. */
    public Usage usage() {
        return usage;
    }

    /** The response ended whole: the request is done. Idempotent with the other ends. */
    public void completed() {
        if (scanner != null) {
            scanner.end();
            usage = scanner.usage();
        }
        end("ok");
    }

    /**
     * The exchange failed ({@code reason} for the log); if {@code engineAtFault} (it closed the
     * connection, reset it, or stopped answering), the engine leaves routing until its health check
     * passes. Idempotent with the other ends.
     */
    public void failed(String reason, boolean engineAtFault) {
        if (engineAtFault) {
            service.engineFailed(engine, reason);
        }
        end("failed");
    }

    /** The client went away: the front door aborts the engine's request; the load is released. Idempotent. */
    public void cancelled() {
        end("cancelled");
    }

    /** The route API's decision expired without its done call. Idempotent with the other ends. */
    public void expired() {
        end("expired");
    }

    /** True once the request has ended. */
    public boolean isDone() {
        return state.get() == DONE;
    }

    /**
     * The engine could not be reached (connection refused, reset or timed out) before any response
     * byte: it leaves routing, this try ends, and the request is routed again among the others, once.
     *
     * @throws ServiceException 502 {@code engine_unavailable} if this was the retry already, a byte came
     *     or no other engine is up
     */
    public RoutedRequest retry(String reason) throws ServiceException {
        if (retried || started()) {
            failed(reason, true);
            throw ServiceException.engineFailed("engine " + worker() + " failed: " + reason);
        }
        service.engineFailed(engine, reason);
        if (!state.compareAndSet(OPEN, DONE)) {
            throw ServiceException.engineFailed("engine " + worker() + " failed: " + reason);
        }
        decision.finished();
        engine.inFlight().decrementAndGet();
        service.meters().finished(worker(), routedByCache(), "retried");
        return service.reroute(this, reason);
    }

    /**
     * The request was served by {@code served}, not by the engine it was routed to (a gateway walked its
     * fallback list, docs/EPP.md section 4): this try ends without freeing the slot, and the request is
     * charged to {@code served} instead, with its own cached depth. Returns the request that now carries
     * the load ({@code this} when {@code served} is the engine chosen, or the request has ended or begun).
     *
     * @throws ServiceException 503 if {@code served} is not an engine routed to now (the request then ends)
     */
    public RoutedRequest servedBy(Worker served) throws ServiceException {
        if (served.equals(worker()) || !state.compareAndSet(OPEN, DONE)) {
            return this;
        }
        decision.finished();
        engine.inFlight().decrementAndGet();
        service.meters().finished(worker(), routedByCache(), "moved");
        return service.moveTo(this, served);
    }

    Predicate<Worker> among() {
        return among;
    }

    AdmissionSlot slot() {
        return slot;
    }

    int[] tokens() {
        return tokens;
    }

    Router router() {
        return router;
    }

    BlockHasher hasher() {
        return hasher;
    }

    private void end(String outcome) {
        int was = state.getAndSet(DONE);
        if (was == DONE) {
            return;
        }
        decision.finished();
        engine.inFlight().decrementAndGet();
        if (slot != null) {
            slot.release();
        }
        service.meters().finished(worker(), routedByCache(), outcome);
        Usage u = usage;
        if (u != null) {
            service.meters().usage(worker(), u, decision.cachedTokens(), boundTokens, hasher.blockSize());
        }
    }

    @Override
    public String toString() {
        return request + " -> " + worker() + " ("
                + (routedByCache() ? cachedBlocks() + " cached blocks" : "load-only: " + loadOnlyReason) + ")";
    }
}
