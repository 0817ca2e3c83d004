package io.kvprefix.cli;

import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The router service's options, shared by the front doors' commands ({@code serve}, {@code epp}):
 * policy, block size, tokenizers, the fleet stream, snapshots, limits, health checks; and the
 * {@code --engine} specs' parsing. Each command keeps its own {@code --engine} form and ports, and
 * builds the service here; {@link RunFlags} holds the options that end their lists
 * (docs/OPERATING.md sections 9 and 11).
 *
 * <p>Thread-safety: a picocli mixin, used once by one thread.
 */
final class RouterFlags {
    @Option(
            names = "--policy",
            paramLabel = "NAME",
            defaultValue = "dynamo-cost",
            description = "routing policy (docs/SPEC.md section 6; default: ${DEFAULT-VALUE})")
    String policy;

    @Option(
            names = "--block-size",
            paramLabel = "N",
            defaultValue = "16",
            description = "tokens per KV block, as the engines use (default: ${DEFAULT-VALUE})")
    int blockSize;

    @Option(
            names = "--tokenizer",
            paramLabel = "MODEL=SPEC",
            description = {
                "how MODEL's text and chat prompts become tokens (repeatable): local:DIR,",
                "render:http://HOST:PORT or tokens (docs/TOKENIZER.md); without one, such",
                "requests are routed by load (x-kvprefix-route: load-only)"
            })
    List<String> tokenizers = new ArrayList<>();

    @Option(
            names = "--nats",
            paramLabel = "URL",
            description = "read the engines' KV events from a fleet stream (kvprefix relay fills it) instead of their"
                    + " publishers")
    String nats;

    @Option(
            names = "--stream",
            paramLabel = "NAME",
            description = {
                "with --nats: the stream's name (default: KVPREFIX_EVENTS); with --dynamo-mode",
                "durable: Dynamo's stream, if named otherwise than namespace-NS-component-C-kv-events"
            })
    String stream;

    @Option(
            names = "--dynamo",
            paramLabel = "URL",
            description = {
                "read the engines' KV events from a running NVIDIA Dynamo deployment's NATS server",
                "(with --namespace and --component; the engines' worker ids are Dynamo's worker ids;",
                "docs/OPERATING.md section 10)"
            })
    String dynamo;

    @Option(names = "--namespace", paramLabel = "NS", description = "with --dynamo: the Dynamo namespace")
    String namespace;

    @Option(names = "--component", paramLabel = "C", description = "with --dynamo: the workers' component")
    String component;

    @Option(
            names = "--dynamo-mode",
            paramLabel = "MODE",
            defaultValue = "event-plane",
            description = "with --dynamo: event-plane (the default) or durable (the JetStream stream)")
    String dynamoMode;

    @Option(
            names = "--snapshot",
            paramLabel = "FILE",
            description = "restore the index from FILE at start and save it every --snapshot-interval and at the end"
                    + " (docs/SNAPSHOT.md)")
    Path snapshot;

    @Option(
            names = "--snapshot-interval",
            paramLabel = "SECONDS",
            defaultValue = "60",
            description = "seconds between snapshot saves (default: ${DEFAULT-VALUE})")
    double snapshotInterval;

    @Option(
            names = "--memory-budget",
            paramLabel = "BYTES",
            description = "most off-heap memory the index may hold, e.g. 512m (default: unlimited)")
    String memoryBudget;

    @Option(
            names = "--max-body",
            paramLabel = "BYTES",
            defaultValue = "32m",
            description = "largest request body accepted; larger ones get 413 (default: ${DEFAULT-VALUE})")
    String maxBody;

    @Option(
            names = "--max-in-flight",
            paramLabel = "N",
            defaultValue = "4096",
            description =
                    "requests routed and not finished at once; more wait in the queue (default: ${DEFAULT-VALUE})")
    int maxInFlight;

    @Option(
            names = "--max-queued",
            paramLabel = "N",
            defaultValue = "1024",
            description = "requests that may wait for a slot; more get 429 (default: ${DEFAULT-VALUE})")
    int maxQueued;

    @Option(
            names = "--queue-timeout",
            paramLabel = "SECONDS",
            defaultValue = "30",
            description = "longest wait for a slot; then 429 (default: ${DEFAULT-VALUE})")
    double queueTimeout;

    @Option(
            names = "--health-interval",
            paramLabel = "SECONDS",
            defaultValue = "2",
            description = "seconds between the engines' health checks (default: ${DEFAULT-VALUE})")
    double healthInterval;

    @Option(
            names = "--health-timeout",
            paramLabel = "SECONDS",
            defaultValue = "2",
            description = "longest health check (default: ${DEFAULT-VALUE})")
    double healthTimeout;

    @Option(
            names = "--decision-ttl",
            paramLabel = "SECONDS",
            defaultValue = "300",
            description =
                    "how long a route-API decision holds its load without its done call (default: ${DEFAULT-VALUE})")
    double decisionTtl;

    @Mixin
    AbsentEnginesFlag absent = new AbsentEnginesFlag();

    @Option(
            names = "--inflight-prefills",
            description = {
                "count each request's blocks as cached on its engine until the engine's events",
                "cover them or the response ends (docs/SPEC.md section 6.7; dynamo-cost, kvprefix-ttft)"
            })
    boolean inflightPrefills;

    /**
     * The service's options over the {@code --engine} specs (at least one, else {@code missing} is the
     * usage error), each put in serve's form by {@code form} and parsed; the tokenizers not yet opened.
     */
    ServiceOptions serviceOptions(List<String> engines, String missing, UnaryOperator<String> form) {
        if (engines.isEmpty()) {
            throw new IllegalArgumentException(missing);
        }
        List<EngineSpec> specs = new ArrayList<>();
        for (String e : engines) {
            try {
                specs.add(EngineSpec.parse(form.apply(e)));
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("--engine: " + ex.getMessage(), ex);
            }
        }
        return serviceOptions(specs);
    }

    /** The service's options over {@code engines} (each parsed by the command), the tokenizers not yet opened. */
    ServiceOptions serviceOptions(List<EngineSpec> engines) {
        ServiceOptions o = RouterService.builder();
        engines.forEach(o::engine);
        try {
            o.policy(policy);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--policy: " + e.getMessage(), e);
        }
        o.blockSize(blockSize);
        if (memoryBudget != null) {
            o.memoryBudget(Check.parseBytes(memoryBudget, "--memory-budget"));
        }
        o.maxBodyBytes(Check.parseBytes(maxBody, "--max-body"));
        o.maxInFlight(maxInFlight).maxQueued(maxQueued);
        o.queueTimeout(Check.seconds("--queue-timeout", queueTimeout));
        o.healthInterval(Check.seconds("--health-interval", healthInterval));
        o.healthTimeout(Check.seconds("--health-timeout", healthTimeout));
        o.decisionTtl(Check.seconds("--decision-ttl", decisionTtl));
        o.readyWithAbsentEngines(absent.readyWithAbsentEngines);
        if (inflightPrefills
                && !policy.strip().equalsIgnoreCase("dynamo-cost")
                && !policy.strip().equalsIgnoreCase("kvprefix-ttft")) {
            throw new IllegalArgumentException("--inflight-prefills applies to the dynamo-cost and kvprefix-ttft "
                    + "policies only, not to " + policy);
        }
        o.inflightPrefills(inflightPrefills);
        if (nats != null) {
            if (nats.isBlank()) {
                throw new IllegalArgumentException("--nats needs a URL, such as nats://127.0.0.1:4222");
            }
            o.nats(nats, stream == null ? "KVPREFIX_EVENTS" : stream);
        }
        dynamoOptions(o);
        if (snapshot != null) {
            o.snapshot(snapshot, Check.seconds("--snapshot-interval", snapshotInterval));
        }
        return o;
    }

    /** {@code --dynamo} and its options, onto {@code o}; checked before anything connects. */
    private void dynamoOptions(ServiceOptions o) {
        if (dynamo == null) {
            if (namespace != null || component != null || !dynamoMode.equals("event-plane")) {
                throw new IllegalArgumentException("--namespace, --component and --dynamo-mode go with --dynamo URL");
            }
            return;
        }
        if (nats != null) {
            throw new IllegalArgumentException("--nats and --dynamo exclude each other");
        }
        if (namespace == null || namespace.isEmpty() || component == null || component.isEmpty()) {
            throw new IllegalArgumentException("--dynamo needs --namespace NS and --component C");
        }
        boolean durable = switch (dynamoMode) {
            case "durable" -> true;
            case "event-plane" -> false;
            default ->
                throw new IllegalArgumentException(
                        "--dynamo-mode must be durable or event-plane, not '" + dynamoMode + "'");
        };
        if (stream != null && !durable) {
            throw new IllegalArgumentException("--stream names the JetStream stream of --dynamo-mode durable");
        }
        o.dynamo(dynamo, namespace, component, durable, stream);
    }

    /** Opens the tokenizers into {@code o} and builds the service (which then owns them). */
    RouterService build(ServiceOptions o) {
        List<PromptTokenizer> opened = new ArrayList<>();
        try {
            for (String t : tokenizers) {
                int eq = t.indexOf('=');
                if (eq <= 0 || eq == t.length() - 1) {
                    throw new IllegalArgumentException("--tokenizer '" + t
                            + "': expected MODEL=SPEC (local:DIR, render:http://HOST:PORT or tokens)");
                }
                PromptTokenizer pt = openTokenizer(t, t.substring(eq + 1));
                opened.add(pt);
                o.tokenizer(t.substring(0, eq), pt);
            }
            return o.build();
        } catch (RuntimeException e) {
            opened.forEach(PromptTokenizer::close);
            throw e;
        }
    }

    private static PromptTokenizer openTokenizer(String option, String spec) {
        try {
            return Tokenizers.open(spec);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            throw new IllegalArgumentException("--tokenizer '" + option + "': " + e.getMessage(), e);
        }
    }

    /** Checks a port option: 0..65535. */
    static void checkPort(String option, Integer port) {
        if (port != null && (port < 0 || port > 65535)) {
            throw new IllegalArgumentException(option + " must be 0..65535 (0: any free port), got " + port);
        }
    }
}
