package io.kvprefix.service;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.RoutingPolicy;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Builds a {@link RouterService} ({@link RouterService#builder()}). Every option has a default; a
 * service needs at least one engine. The defaults are the ones {@code kvprefix serve} documents
 * (docs/SERVE.md).
 *
 * <p>Thread-safety: not thread-safe; use one builder per thread.
 */
public final class ServiceOptions {
    final List<EngineSpec> engines = new ArrayList<>();
    final Map<String, PromptTokenizer> tokenizers = new LinkedHashMap<>();
    String natsUrl;
    String natsStream = "KVPREFIX_EVENTS";
    String dynamoUrl;
    String dynamoNamespace;
    String dynamoComponent;
    boolean dynamoDurable;
    String dynamoStream;
    PrefixIndex index;
    int blockSize = 16;
    long memoryBudget = IndexConfig.UNLIMITED;
    String policy = RoutingPolicy.DYNAMO_COST.policyName();
    Path snapshot;
    Duration snapshotInterval = Duration.ofSeconds(60);
    Duration replayTimeout = Duration.ofSeconds(3);
    boolean readyWithAbsentEngines;
    boolean inflightPrefills;
    int maxInFlight = 4096;
    int maxQueued = 1024;
    Duration queueTimeout = Duration.ofSeconds(30);
    Duration decisionTtl = Duration.ofMinutes(5);
    int maxDecisions = 65_536;
    Duration healthInterval = Duration.ofSeconds(2);
    Duration healthTimeout = Duration.ofSeconds(2);
    long maxBodyBytes = 32L << 20;
    boolean saltNamespace;
    boolean saltNamespaceSet;
    MeterRegistry meterRegistry;

    ServiceOptions() {}

    /** An engine to route to (repeatable; each worker once). */
    public ServiceOptions engine(EngineSpec engine) {
        engines.add(Objects.requireNonNull(engine, "engine"));
        return this;
    }

    /**
     * The tokenizer of {@code model}'s text and chat prompts ({@code kvprefix serve --tokenizer
     * MODEL=SPEC}; one per model). The service closes it when it closes. Without one, the model's text
     * and chat requests are routed by load ({@code x-kvprefix-route: load-only}, reason
     * {@code no_tokenizer}); token-id prompts never need one.
     */
    public ServiceOptions tokenizer(String model, PromptTokenizer tokenizer) {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(tokenizer, "tokenizer");
        if (tokenizers.putIfAbsent(model, tokenizer) != null) {
            throw new IllegalArgumentException("--tokenizer: model '" + model + "' is given two tokenizers");
        }
        return this;
    }

    /** The engines' KV events come from the fleet stream {@code stream} at {@code url} instead of their publishers (docs/FLEET.md). */
    public ServiceOptions nats(String url, String stream) {
        this.natsUrl = Objects.requireNonNull(url, "url");
        this.natsStream = Objects.requireNonNull(stream, "stream");
        return this;
    }

    /**
     * The engines' KV events come from a running NVIDIA Dynamo deployment's NATS server at {@code url}
     * (docs/ENGINES.md section 4): its event plane, or ({@code durable}) its JetStream stream, named
     * {@code stream} or (null) as Dynamo names it. The engines' worker ids are Dynamo's.
     */
    public ServiceOptions dynamo(String url, String namespace, String component, boolean durable, String stream) {
        this.dynamoUrl = Objects.requireNonNull(url, "url");
        this.dynamoNamespace = Objects.requireNonNull(namespace, "namespace");
        this.dynamoComponent = Objects.requireNonNull(component, "component");
        this.dynamoDurable = durable;
        this.dynamoStream = stream;
        return this;
    }

    /** Routes against {@code index}, which the caller feeds and closes (default: the service makes and feeds its own). */
    public ServiceOptions index(PrefixIndex index) {
        this.index = Objects.requireNonNull(index, "index");
        return this;
    }

    /** Tokens per block (default 16, vLLM's); the engines must use the same. */
    public ServiceOptions blockSize(int blockSize) {
        if (blockSize < 1) {
            throw new IllegalArgumentException("--block-size must be >= 1, got " + blockSize);
        }
        this.blockSize = blockSize;
        return this;
    }

    /** Most off-heap memory the index may hold, in bytes (default unlimited). */
    public ServiceOptions memoryBudget(long bytes) {
        this.memoryBudget = bytes;
        return this;
    }

    /** The routing policy by name (default {@code dynamo-cost}; docs/SPEC.md section 6). */
    public ServiceOptions policy(String name) {
        this.policy = RoutingPolicy.of(Objects.requireNonNull(name, "name")).policyName();
        return this;
    }

    /** Restore the index from {@code file} at start, save it every {@code interval} and at close (ZMQ feeds only). */
    public ServiceOptions snapshot(Path file, Duration interval) {
        this.snapshot = Objects.requireNonNull(file, "file");
        this.snapshotInterval = positive(interval, "--snapshot-interval");
        return this;
    }

    /**
     * Whether an engine declared absent (its start-up replay given up with nothing applied) lets the
     * service be ready (default false: it holds readiness back, as {@code listen}'s; docs/METRICS.md
     * section 2).
     */
    public ServiceOptions readyWithAbsentEngines(boolean allowed) {
        this.readyWithAbsentEngines = allowed;
        return this;
    }

    /**
     * Whether every model's router counts in-flight prefills (default false; dynamo-cost and
     * kvprefix-ttft only, docs/SPEC.md section 6.7): a request's blocks count as cached on its engine
     * from the decision until the engine's events cover them or the response ends.
     */
    public ServiceOptions inflightPrefills(boolean on) {
        this.inflightPrefills = on;
        return this;
    }

    /** How long a replay request may go unanswered before it is asked again (default 3 s). */
    public ServiceOptions replayTimeout(Duration d) {
        this.replayTimeout = positive(d, "--replay-timeout");
        return this;
    }

    /** Requests in flight at once (default 4096); past it they queue. */
    public ServiceOptions maxInFlight(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("--max-in-flight must be >= 1, got " + n);
        }
        this.maxInFlight = n;
        return this;
    }

    /** Requests that may wait for a slot (default 1024); past it, 429 {@code queue_full}. */
    public ServiceOptions maxQueued(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("--max-queued must be >= 0, got " + n);
        }
        this.maxQueued = n;
        return this;
    }

    /** How long a request may wait for a slot (default 30 s); past it, 429 {@code queue_timeout}. */
    public ServiceOptions queueTimeout(Duration d) {
        this.queueTimeout = positive(d, "--queue-timeout");
        return this;
    }

    /** How long a route-API decision holds its load without its done call (default 5 min). */
    public ServiceOptions decisionTtl(Duration d) {
        this.decisionTtl = positive(d, "--decision-ttl");
        return this;
    }

    /** Route-API decisions open at once (default 65,536); past it, 429 {@code too_many_decisions}. */
    public ServiceOptions maxDecisions(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("maxDecisions must be >= 1, got " + n);
        }
        this.maxDecisions = n;
        return this;
    }

    /** Time between health-check rounds (default 2 s). */
    public ServiceOptions healthInterval(Duration d) {
        this.healthInterval = positive(d, "--health-interval");
        return this;
    }

    /** How long one health check may take (default 2 s). */
    public ServiceOptions healthTimeout(Duration d) {
        this.healthTimeout = positive(d, "--health-timeout");
        return this;
    }

    /** The largest request body a front door accepts (default 32 MiB); past it, 413. */
    public ServiceOptions maxBodyBytes(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("--max-body must be >= 1 byte, got " + bytes);
        }
        this.maxBodyBytes = bytes;
        return this;
    }

    /**
     * Whether a request's {@code cache_salt} salts its block hashes as a cache namespace (docs/SERVE.md
     * section 5). Default: on when every engine's events are in SGLang's format (whose salted stores
     * carry the salt, which the listener applies as the namespace), off otherwise (vLLM's events carry
     * a bare salt that the listener does not hash, so the index holds salted requests' blocks unsalted).
     */
    public ServiceOptions saltNamespace(boolean on) {
        this.saltNamespace = on;
        this.saltNamespaceSet = true;
        return this;
    }

    /** The registry the meters go to (default: a Prometheus registry of the service's own, which {@link RouterService#scrape()} renders). */
    public ServiceOptions meterRegistry(MeterRegistry registry) {
        this.meterRegistry = Objects.requireNonNull(registry, "registry");
        return this;
    }

    IndexConfig indexConfig() {
        try {
            return IndexConfig.builder()
                    .blockSize(blockSize)
                    .memoryBudgetBytes(memoryBudget)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("index configuration: " + e.getMessage(), e);
        }
    }

    /**
     * Builds the service: makes (or restores) the index, starts the feed, checks every engine once
     * (waiting for that round), then keeps checking them every interval.
     *
     * @throws IllegalArgumentException for a configuration that cannot work (no engine, a worker given
     *     twice, a snapshot with a fleet stream or an index of the caller's, a fleet stream that cannot
     *     be reached), with a message naming the option
     */
    public RouterService build() {
        if (engines.isEmpty()) {
            throw new IllegalArgumentException("give at least one --engine WORKER=http://HOST:PORT");
        }
        Set<Object> workers = new HashSet<>();
        for (EngineSpec e : engines) {
            if (!workers.add(e.worker())) {
                throw new IllegalArgumentException("--engine: worker " + e.worker() + " is given twice");
            }
            if (dynamoUrl != null && e.events().isPresent()) {
                throw new IllegalArgumentException("--engine " + e + ": events= and --dynamo exclude each other: with "
                        + "--dynamo the engines' events come from Dynamo's NATS server");
            }
            if (natsUrl != null && e.events().isPresent()) {
                throw new IllegalArgumentException("--engine " + e + ": events= and --nats exclude each other: with "
                        + "--nats the engines' events come from the fleet stream");
            }
        }
        if (dynamoUrl != null && (natsUrl != null || snapshot != null || index != null)) {
            throw new IllegalArgumentException("--dynamo excludes --nats, --snapshot and an index of the caller's");
        }
        if (snapshot != null && (natsUrl != null || index != null)) {
            throw new IllegalArgumentException(
                    natsUrl != null
                            ? "--snapshot is for engines read directly; a fleet replica starts from the stream"
                            : "--snapshot needs the service's own index");
        }
        if (index != null && natsUrl != null) {
            throw new IllegalArgumentException("an index of the caller's and --nats exclude each other");
        }
        if (!saltNamespaceSet) {
            saltNamespace = engines.stream()
                    .allMatch(e ->
                            e.events().map(x -> x.format().equals("sglang")).orElse(false));
        }
        return new RouterService(this);
    }

    private static Duration positive(Duration d, String option) {
        Objects.requireNonNull(d, option);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(option + " must be positive, got " + d);
        }
        return d;
    }
}
