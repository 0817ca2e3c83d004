package io.kvprefix.service;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.RoutingPolicy;
import io.kvprefix.Worker;
import io.kvprefix.metrics.PrefixIndexMetrics;
import io.kvprefix.metrics.RouterMetrics;
import io.kvprefix.service.ClassifiedRequest.Kind;
import io.kvprefix.service.ClassifiedRequest.Prompt;
import io.kvprefix.service.internal.Admission;
import io.kvprefix.service.internal.Classifier;
import io.kvprefix.service.internal.DecisionBook;
import io.kvprefix.service.internal.EngineRegistry;
import io.kvprefix.service.internal.EventFeed;
import io.kvprefix.service.internal.HealthChecker;
import io.kvprefix.service.internal.ServiceMeters;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The router service: everything a KV-aware front door needs except its HTTP (or gRPC, or gateway)
 * stack. It holds the index and its event feed, one {@link Router} per model over the engines that
 * serve it, the engine registry with its health checks, bounded admission, the route API's open
 * decisions and the meters; a front door classifies each request, takes an admission slot, routes,
 * forwards, and reports the exchange's events to the {@link RoutedRequest} it got (the lifecycle is
 * the table in this package's description; docs/SERVE.md states the contract).
 *
 * <pre>{@code
 * RouterService service = RouterService.builder().engine(EngineSpec.parse("7=http://10.0.0.5:8000,events=tcp://10.0.0.5:5557"))
 *         .policy("kvprefix-ttft").build();
 * ClassifiedRequest req = service.classify("POST", "/v1/completions", body);   // 400/404 as ServiceException
 * service.admit().thenAccept(slot -> {                                         // 429 when the queue is full
 *     RoutedRequest r = service.route(req, slot);                              // 503 when no engine is up
 *     forward(r.target("/v1/completions"), body, r.headers());                 // ... r.firstByte(), r.completed()
 * });
 * }</pre>
 *
 * <p>Thread-safety: thread-safe. {@link #classify}, {@link #admit} and routing a request with token
 * ids never block and may run on an event loop; routing a text or chat prompt through a tokenizer
 * blocks ({@link #needsBlockingRoute}): run it on a worker thread. Health checks, snapshot saves and
 * decision expiry run on the service's own daemon timer thread.
 */
public final class RouterService implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.service");

    private final ServiceOptions options;
    private final EventFeed feed;
    private final PrefixIndex index;
    private final EngineRegistry registry;
    private final HealthChecker health;
    private final Admission admission;
    private final DecisionBook decisions;
    private final ServiceMeters meters;
    /** The infinite-cache bound of every routed request, fleet-wide (docs/METRICS.md section 4). */
    private final InfiniteCacheSketch bound = new InfiniteCacheSketch(InfiniteCacheSketch.DEFAULT_CAPACITY);

    private final MeterRegistry meterRegistry;
    private final List<Runnable> beforeScrape = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService timer;
    private final ConcurrentHashMap<String, BlockHasher> hashers = new ConcurrentHashMap<>();
    private final RouteApi routeApi;
    private volatile boolean closed;

    RouterService(ServiceOptions o) {
        this.options = o;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-service-timer");
            t.setDaemon(true);
            return t;
        });
        this.meterRegistry =
                o.meterRegistry != null ? o.meterRegistry : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        this.meters = new ServiceMeters(meterRegistry);
        IndexConfig config = o.indexConfig();
        if (o.dynamoUrl != null) {
            this.feed = EventFeed.dynamo(
                    o.dynamoUrl, o.dynamoNamespace, o.dynamoComponent, o.dynamoDurable, o.dynamoStream, config);
        } else {
            this.feed = o.natsUrl != null
                    ? EventFeed.nats(o.natsUrl, o.natsStream, config)
                    : EventFeed.zmq(o.index, config, o.engines, o.snapshot, o.replayTimeout);
        }
        PrefixIndex timed = PrefixIndexMetrics.timed(feed.index(), meterRegistry);
        PrefixIndexMetrics im = new PrefixIndexMetrics(timed);
        im.bindTo(meterRegistry);
        beforeScrape.add(im::refresh);
        feed.bindTo(meterRegistry, beforeScrape);
        this.index = timed;
        this.registry = new EngineRegistry(
                timed,
                RoutingPolicy.of(o.policy),
                o.inflightPrefills,
                o.engines,
                (model, router) -> new RouterMetrics(router, Tags.of("model", model)).bindTo(meterRegistry),
                (engine, reason) -> {
                    meters.engineDown(engine.spec().worker(), reason.startsWith("health") ? "health" : "request");
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "kvprefix serve: engine " + engine.spec() + " left routing: " + reason);
                });
        this.admission = new Admission(o.maxInFlight, o.maxQueued, o.queueTimeout.toNanos(), timer);
        this.decisions = new DecisionBook(o.decisionTtl.toNanos(), o.maxDecisions);
        this.routeApi = new RouteApi(this);
        bindGauges();
        this.health = new HealthChecker(registry, o.healthTimeout);
        health.checkNow();
        health.start(timer, o.healthInterval);
        feed.saveEvery(timer, o.snapshotInterval);
        timer.scheduleWithFixedDelay(decisions::sweep, 1, 1, TimeUnit.SECONDS);
    }

    /** A builder with every option at its default ({@link ServiceOptions}). */
    public static ServiceOptions builder() {
        return new ServiceOptions();
    }

    private void bindGauges() {
        meters.gauge(
                "kvprefix.service.in.flight",
                "Requests routed and not finished (holding an admission slot)",
                admission::inFlight);
        meters.gauge("kvprefix.service.queued", "Requests waiting for an admission slot", admission::queued);
        meters.gauge("kvprefix.service.decisions.open", "Route-API decisions open", decisions::size);
        meters.gauge("kvprefix.service.engines.up", "Engines routed to now", registry::upCount);
        for (EngineRegistry.Engine e : registry.engines()) {
            String w = e.spec().worker().toString();
            meters.gauge(
                    "kvprefix.service.engine.up", "1 while the engine is routed to", () -> e.up() ? 1 : 0, "worker", w);
            meters.gauge(
                    "kvprefix.service.engine.in.flight",
                    "Requests forwarded to the engine and not finished",
                    e.inFlight()::get,
                    "worker",
                    w);
        }
    }

    /**
     * Classifies a request: which API, which model, the prompt's form (docs/SERVE.md section 1). A
     * model no engine serves is refused here.
     *
     * @throws ServiceException 400 for a malformed body, 404 for an unknown model
     */
    public ClassifiedRequest classify(String method, String path, byte[] body) throws ServiceException {
        try {
            ClassifiedRequest r = Classifier.classify(method, path, body);
            if (r.model() != null && r.kind() != Kind.OTHER && registry.router(r.model()) == null) {
                throw ServiceException.unknownModel(r.model(), registry.knownModels());
            }
            return r;
        } catch (ServiceException e) {
            meters.error(e.code());
            throw e;
        }
    }

    /** Refuses a body over the limit: 413, counted. */
    public ServiceException tooLarge() {
        meters.error("request_too_large");
        return ServiceException.tooLarge(options.maxBodyBytes);
    }

    /** The largest request body the front doors accept, in bytes. */
    public long maxBodyBytes() {
        return options.maxBodyBytes;
    }

    /**
     * An admission slot (docs/SERVE.md section 4): at once if one is free, after a wait in the queue,
     * or failed with a 429 {@link ServiceException}. Cancel the future to give up waiting.
     */
    public CompletableFuture<AdmissionSlot> admit() {
        CompletableFuture<AdmissionSlot> f = admission.acquire();
        f.whenComplete((s, e) -> {
            if (e instanceof ServiceException se) {
                meters.error(se.code());
            }
        });
        return f;
    }

    /** True if routing {@code r} blocks (a text or chat prompt and a tokenizer to run): call {@link #route} off an event loop. */
    public boolean needsBlockingRoute(ClassifiedRequest r) {
        if (r.kind() == Kind.OTHER || (r.prompt() != Prompt.TEXT && r.prompt() != Prompt.CHAT)) {
            return false;
        }
        PromptTokenizer t = options.tokenizers.get(r.model() != null ? r.model() : onlyModelOrNull());
        return t != null && !t.mode().equals("tokens");
    }

    private String onlyModelOrNull() {
        var known = registry.knownModels();
        return known.size() == 1 ? known.iterator().next() : null;
    }

    /**
     * Routes a classified request with its admission slot, which the returned request now owns (and
     * frees when it ends; if routing fails, the slot is freed here).
     *
     * @throws ServiceException 404 for an unknown model, 503 when no engine serving it is up
     */
    public RoutedRequest route(ClassifiedRequest r, AdmissionSlot slot) throws ServiceException {
        return route(r, slot, null);
    }

    /**
     * As {@link #route(ClassifiedRequest, AdmissionSlot)}, among the engines whose workers {@code among}
     * accepts alone (every engine when null): an endpoint picker's subset hint (docs/EPP.md section 3).
     * The retry and the fallbacks keep to them too.
     *
     * @throws ServiceException 404 for an unknown model, 503 when no engine among them is up
     */
    public RoutedRequest route(ClassifiedRequest r, AdmissionSlot slot, Predicate<Worker> among)
            throws ServiceException {
        try {
            return route(r, slot, among, false, null);
        } catch (ServiceException | RuntimeException e) {
            if (slot != null) {
                slot.release();
            }
            throw e;
        }
    }

    /** What routing a request takes: its model's router, and its tokens and hasher (null when routed by load, for {@code reason}). */
    record Plan(String model, Router router, int[] tokens, BlockHasher hasher, String reason) {}

    Plan plan(ClassifiedRequest r) throws ServiceException {
        checkOpen();
        String model = r.model() != null ? r.model() : r.kind() == Kind.OTHER ? null : soleModel();
        Router router = registry.router(model);
        if (router == null) {
            throw error(
                    r.kind() == Kind.OTHER
                            ? ServiceException.noEngine("No engine serves the model '" + model + "'")
                            : ServiceException.unknownModel(model, registry.knownModels()));
        }
        if (r.kind() == Kind.OTHER) {
            return new Plan(model, router, null, null, "pass_through");
        }
        int[] tokens = r.tokens();
        String reason = null;
        if (r.prompt() == Prompt.NONE) {
            reason = "no_prompt";
        } else if (tokens == null) {
            PromptTokenizer t = model == null ? null : options.tokenizers.get(model);
            if (t == null || r.kind() == Kind.GENERATE) {
                reason = "no_tokenizer";
            } else {
                long t0 = System.nanoTime();
                try {
                    tokens = (r.prompt() == Prompt.CHAT ? t.chat(r.body()) : t.completion(r.body())).tokens();
                } catch (TokenizeException e) {
                    reason = e.reason();
                    LOG.log(System.Logger.Level.DEBUG, "tokenizing a request for " + model + ": " + e.getMessage());
                } catch (RuntimeException e) {
                    reason = TokenizeException.TOKENIZER_ERROR;
                    LOG.log(System.Logger.Level.WARNING, "tokenizing a request for " + model + ": " + e);
                }
                meters.tokenizeNanos(model, System.nanoTime() - t0);
            }
        }
        if (reason != null) {
            return new Plan(model, router, null, null, reason);
        }
        BlockHasher h = hasher(registry.loraName(model), options.saltNamespace ? r.cacheSalt() : null);
        return new Plan(model, router, tokens, h, null);
    }

    RoutedRequest route(
            ClassifiedRequest r, AdmissionSlot slot, Predicate<Worker> among, boolean retried, String retryReason)
            throws ServiceException {
        Plan p = plan(r);
        RoutingDecision d;
        // the bound's hashes come from the routing call's one hash-and-match (docs/METRICS.md section 4)
        long[] locals =
                retried || p.tokens() == null ? null : new long[p.hasher().blockCount(p.tokens().length)];
        long t0 = System.nanoTime();
        try {
            d = p.tokens() != null
                    ? p.router().route(p.tokens(), 0, p.tokens().length, p.hasher(), among, locals)
                    : p.router().route(new long[0], r.estimatedTokens(), among);
        } catch (IllegalStateException e) {
            throw error(noEngineUp(p.model(), retried ? retryReason : null));
        }
        meters.routeNanos(System.nanoTime() - t0);
        EngineRegistry.Engine engine = registry.engine(d.worker());
        engine.inFlight().incrementAndGet();
        meters.routed(d.worker(), p.reason() == null, p.reason());
        long boundTokens = locals == null ? -1 : boundTokens(locals, p.hasher());
        return new RoutedRequest(
                this, r, engine, p.router(), d, p.hasher(), p.tokens(), p.reason(), slot, among, retried, boundTokens);
    }

    /**
     * The tokens of a request's full blocks, given as the local hashes its routing call handed back,
     * that one shared never-evicting cache would hold after every request routed before it (the
     * sketch's estimate), then counts the request in: its chain hashes are made from those local
     * hashes, and its tokens are not hashed again.
     */
    private long boundTokens(long[] locals, BlockHasher h) {
        long[] chains = h.chainHashes(locals);
        return Math.round(bound.observe(chains, chains.length) * h.blockSize());
    }

    /** The fleet's infinite-cache bound so far (docs/METRICS.md section 4). */
    public InfiniteCacheSketch infiniteCacheBound() {
        return bound;
    }

    static ServiceException noEngineUp(String model, String after) {
        return ServiceException.noEngine((after != null ? "After " + after + ", no" : "No") + " engine serving "
                + (model == null ? "any model" : "the model '" + model + "'") + " is up");
    }

    /** The one model the engines serve, or null (then the request routes over every engine). */
    private String soleModel() throws ServiceException {
        var served = registry.knownModels();
        if (served.size() <= 1) {
            return served.isEmpty() ? null : served.iterator().next();
        }
        throw error(ServiceException.badRequest(
                "model_required",
                "model",
                "The request names no model, and the engines serve several: " + String.join(", ", served)));
    }

    RoutedRequest reroute(RoutedRequest failed, String reason) throws ServiceException {
        meters.retry();
        try {
            return route(
                    failed.request(),
                    failed.slot(),
                    failed.among(),
                    true,
                    "engine " + failed.worker() + " failed (" + reason + ")");
        } catch (ServiceException e) {
            release(failed.slot());
            throw e.status() == 503 ? error(ServiceException.engineFailed(e.getMessage())) : e;
        } catch (RuntimeException e) {
            release(failed.slot());
            throw e;
        }
    }

    /** {@code moved}'s request again, charged to {@code served} alone, with the slot it holds (docs/EPP.md section 4). */
    RoutedRequest moveTo(RoutedRequest moved, Worker served) throws ServiceException {
        try {
            return route(moved.request(), moved.slot(), served::equals, moved.retried(), null);
        } catch (ServiceException | RuntimeException e) {
            release(moved.slot());
            throw e;
        }
    }

    private static void release(AdmissionSlot slot) {
        if (slot != null) {
            slot.release();
        }
    }

    /** The salted hasher for an adapter and a namespace (the index's own when both are null). */
    BlockHasher hasher(String lora, String namespace) {
        if (lora == null && namespace == null) {
            return index.hasher();
        }
        String key = (lora == null ? "" : lora) + '\0' + (namespace == null ? "" : namespace);
        BlockHasher h = hashers.get(key);
        if (h == null) {
            BlockHasher base = index.hasher();
            h = BlockHasher.builder()
                    .blockSize(base.blockSize())
                    .seed(base.baseSeed())
                    .chainSeed(base.chainSeed())
                    .implementation(base.implementation())
                    .loraName(lora)
                    .cacheNamespace(namespace)
                    .build();
            if (hashers.size() < 4096) {
                hashers.put(key, h);
            }
        }
        return h;
    }

    void engineFailed(EngineRegistry.Engine e, String reason) {
        registry.down(e, "request: " + reason);
    }

    ServiceException error(ServiceException e) {
        meters.error(e.code());
        return e;
    }

    EngineRegistry registry() {
        return registry;
    }

    ServiceMeters meters() {
        return meters;
    }

    DecisionBook decisions() {
        return decisions;
    }

    private void checkOpen() throws ServiceException {
        if (closed) {
            throw ServiceException.noEngine("The router is shutting down");
        }
    }

    /** The JSON route API (docs/SERVE.md section 3), for a front door to serve. */
    public RouteApi routeApi() {
        return routeApi;
    }

    /** The {@code /v1/models} answer: the union of the up engines' model lists, each model's card as an engine gave it. */
    public byte[] modelsJson() {
        ObjectNode root = Classifier.JSON.createObjectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        for (String m : registry.servedModels()) {
            data.add(registry.card(m));
        }
        return root.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Every engine's state now. */
    public List<EngineStatus> engines() {
        return registry.status();
    }

    /** Null when the service can route (an engine is up and the feed has caught up), else why not. */
    public String notReady() {
        if (closed) {
            return "stopping";
        }
        if (registry.upCount() == 0) {
            return "no engine is up";
        }
        return feed.notReady(options.readyWithAbsentEngines);
    }

    /** The {@code /health} answer: {@code {"status":"ok"|"unavailable","reason":...,"engines":[...]}}. */
    public byte[] healthJson() {
        String why = notReady();
        ObjectNode root = Classifier.JSON.createObjectNode();
        root.put("status", why == null ? "ok" : "unavailable");
        if (why != null) {
            root.put("reason", why);
        }
        ArrayNode list = root.putArray("engines");
        for (EngineStatus s : engines()) {
            ObjectNode e = list.addObject();
            e.put("worker", s.spec().worker().toString());
            e.put("url", s.spec().baseUrl().toString());
            e.put("up", s.up());
            if (!s.up()) {
                e.put("reason", s.downReason());
            }
            e.put("in_flight", s.inFlight());
            ArrayNode models = e.putArray("models");
            s.models().forEach(models::add);
        }
        return root.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** What is in flight now and what deciding has cost, for tests and benchmarks. */
    public ServiceStats stats() {
        var t = meters.routeTimer();
        return new ServiceStats(
                admission.inFlight(),
                admission.queued(),
                decisions.size(),
                registry.engines().stream().mapToLong(e -> e.inFlight().get()).sum(),
                t.count(),
                (long) t.totalTime(TimeUnit.NANOSECONDS),
                (long) t.max(TimeUnit.NANOSECONDS));
    }

    /** The index (with its match calls timed). */
    public PrefixIndex index() {
        return index;
    }

    /** The router of {@code model} (of every engine for null), or null if no engine ever served it. */
    public Router router(String model) {
        return registry.router(model);
    }

    /** The registry the meters are in. */
    public MeterRegistry meterRegistry() {
        return meterRegistry;
    }

    /** The Prometheus text of every meter (docs/METRICS.md sections 1 and 4), after refreshing the scraped ones. */
    public String scrape() {
        beforeScrape.forEach(Runnable::run);
        if (meterRegistry instanceof PrometheusMeterRegistry p) {
            return p.scrape();
        }
        throw new IllegalStateException(
                "the meters are in a " + meterRegistry.getClass().getSimpleName()
                        + ", which renders no Prometheus text; scrape that registry");
    }

    /** The hooks to run before rendering the meters (the scraped ones' refresh). */
    public List<Runnable> beforeScrape() {
        return List.copyOf(beforeScrape);
    }

    /** Runs one round of health checks now, waiting for it (tests, and a front door's start). */
    public void checkEnginesNow() {
        health.checkNow();
    }

    /**
     * Stops: new requests are refused (503), open route-API decisions end, the health checks and the
     * timer stop, the feed saves its snapshot and stops, the routers and (if the service made it) the
     * index close. Requests in flight should be ended by their front door first. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        decisions.clear();
        health.close();
        timer.shutdownNow();
        try {
            timer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        registry.close();
        feed.close();
        for (PromptTokenizer t : options.tokenizers.values()) {
            try {
                t.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing the tokenizer of a model: " + e);
            }
        }
        if (options.meterRegistry == null) {
            meterRegistry.close();
        }
    }
}
