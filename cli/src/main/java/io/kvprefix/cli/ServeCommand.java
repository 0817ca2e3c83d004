package io.kvprefix.cli;

import io.kvprefix.metrics.MetricsServer;
import io.kvprefix.server.ServeServer;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.EngineStatus;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.Tokenizers;
import io.kvprefix.zmq.EngineDiscovery;
import io.kvprefix.zmq.EngineEndpoint;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix serve}: the OpenAI-compatible KV-aware router in front of real engines
 * (docs/OPERATING.md section 9; the HTTP contract is docs/SERVE.md). Builds the router service from the
 * options, starts the Vert.x front door, prints one {@code READY {...}} line on standard output once it
 * serves (for scripts and tests that start it as a child), and runs until Ctrl-C, SIGTERM or
 * {@code --duration}.
 *
 * <p>Exit status: 0 after a run; 2 for a usage error (a bad option, an engine spec, a port that cannot
 * be bound, a tokenizer that cannot be opened); 1 if it fails on its way.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Serve an OpenAI-compatible, KV-cache-aware router in front of engines (vLLM, SGLang).",
            "Each request is routed by its prompt's cached prefix (token ids at once; text and chat",
            "through --tokenizer, else by load) and proxied with its stream passed through as it",
            "comes. Endpoints: /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics,",
            "POST /kvprefix/v1/route and /kvprefix/v1/explain; other paths go to an engine by load.",
            "The engines' KV events feed the index (ZMQ with replay, --nats, or --dynamo). docs/OPERATING.md section 9."
        })
final class ServeCommand implements Callable<Integer> {

    @Option(
            names = "--engine",
            paramLabel = "WORKER[/RANK]=http://HOST:PORT[,events=E][,replay=E][,topic=T][,format=F]",
            description = {
                "an engine (repeatable): its worker id, its HTTP base URL, and its KV-event",
                "publisher (events=tcp://HOST:5557) and replay socket (replay=tcp://HOST:6557),",
                "as listen --engine takes them; without events= (or with --nats) none is read.",
                "events=discover asks the engine (vLLM's GET /kv_event_sources) for both."
            })
    List<String> engines = new ArrayList<>();

    @Option(
            names = "--port",
            paramLabel = "PORT",
            defaultValue = "8000",
            description = "port to serve (default: ${DEFAULT-VALUE}; 0: any free port)")
    int port;

    @Option(
            names = "--host",
            paramLabel = "HOST",
            defaultValue = "0.0.0.0",
            description = "address to bind (default: ${DEFAULT-VALUE})")
    String host;

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
            description =
                    "read the engines' KV events from a fleet stream (kvprefix relay fills it) instead of their publishers")
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
            description =
                    "restore the index from FILE at start and save it every --snapshot-interval and at the end (docs/SNAPSHOT.md)")
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
            description = "requests proxied at once; more wait in the queue (default: ${DEFAULT-VALUE})")
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
            names = "--connect-timeout",
            paramLabel = "SECONDS",
            defaultValue = "5",
            description = "longest connect to an engine; then the next engine (default: ${DEFAULT-VALUE})")
    double connectTimeout;

    @Option(
            names = "--idle-timeout",
            paramLabel = "SECONDS",
            defaultValue = "600",
            description = "longest silence of an engine (prefill included) or a client (default: ${DEFAULT-VALUE})")
    double idleTimeout;

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

    @Option(
            names = "--event-loops",
            paramLabel = "N",
            description = "event loops serving the port (default: the cores, at most 4)")
    Integer eventLoops;

    @Option(
            names = "--metrics-port",
            paramLabel = "PORT",
            description = "also serve /metrics, /health/live and /health/ready on this port (0: any free port)")
    Integer metricsPort;

    @Option(
            names = "--duration",
            paramLabel = "SECONDS",
            description = "stop after this many seconds (default: run until Ctrl-C)")
    Double duration;

    @Option(
            names = {"-q", "--quiet"},
            description = "no log lines on standard error")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        ServiceOptions o = serviceOptions();
        ServeServer.Options so = serverOptions();
        Duration runFor = Check.secondsOrNull("--duration", duration);
        List<PromptTokenizer> opened = new ArrayList<>();
        RouterService built;
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
            built = o.build(); // the service owns the tokenizers from here
        } catch (RuntimeException e) {
            opened.forEach(PromptTokenizer::close);
            throw e;
        }
        // the drain: let the front door and the service stop (the snapshot saved) before the JVM goes
        try (Lifecycle life = Lifecycle.start("serve", Duration.ofSeconds(30), quiet); // closed last
                RouterService service = built;
                ServeServer server = ServeServer.start(service, so);
                MetricsServer metrics = metrics(service)) {
            long up = service.engines().stream().filter(EngineStatus::up).count();
            life.status("listening on http://" + host + ":" + server.port() + " ("
                    + service.engines().size()
                    + " engine(s), " + up + " up; policy " + policy + ")"
                    + (metrics == null
                            ? ""
                            : "; metrics on port " + metrics.address().getPort()));
            for (EngineStatus s : service.engines()) {
                if (!s.up()) {
                    life.status("engine " + s.spec() + " is not up yet: " + s.downReason());
                }
            }
            life.result(
                    "serving",
                    "READY {\"port\":" + server.port() + ",\"metrics_port\":"
                            + (metrics == null ? "null" : metrics.address().getPort()) + ",\"engines\":"
                            + service.engines().size() + ",\"engines_up\":" + up + "}");
            life.runUntilStopped(runFor, null, List.of());
            life.stopping();
            life.status(String.format(
                    Locale.ROOT, "stopping (%d requests served)", server.stats().requests()));
            return 0;
        }
    }

    private static PromptTokenizer openTokenizer(String option, String spec) {
        try {
            return Tokenizers.open(spec);
        } catch (UnsupportedOperationException e) {
            throw new IllegalArgumentException("--tokenizer '" + option + "': " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--tokenizer '" + option + "': " + e.getMessage(), e);
        }
    }

    private MetricsServer metrics(RouterService service) {
        if (metricsPort == null) {
            return null;
        }
        if (!(service.meterRegistry() instanceof PrometheusMeterRegistry p)) {
            throw new IllegalStateException("the service's meters are not in a Prometheus registry");
        }
        try {
            return MetricsServer.start(
                    new InetSocketAddress(host, metricsPort), p, service::notReady, service.beforeScrape());
        } catch (IOException e) {
            throw new IllegalArgumentException("--metrics-port " + metricsPort + ": " + e.getMessage(), e);
        }
    }

    ServiceOptions serviceOptions() {
        ServiceOptions o = RouterService.builder();
        for (String e : engines) {
            try {
                o.engine(EngineSpec.parse(discovered(e)));
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("--engine: " + ex.getMessage(), ex);
            }
        }
        if (engines.isEmpty()) {
            throw new IllegalArgumentException(
                    "give at least one --engine WORKER=http://HOST:PORT[,events=tcp://HOST:PORT]");
        }
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

    ServeServer.Options serverOptions() {
        ServeServer.Options so = ServeServer.options().host(host).port(port);
        so.connectTimeout(Check.seconds("--connect-timeout", connectTimeout));
        so.idleTimeout(Check.seconds("--idle-timeout", idleTimeout));
        if (eventLoops != null) {
            so.eventLoops(eventLoops);
        }
        if (metricsPort != null && (metricsPort < 0 || metricsPort > 65535)) {
            throw new IllegalArgumentException(
                    "--metrics-port must be 0..65535 (0: any free port), got " + metricsPort);
        }
        return so;
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

    /**
     * An {@code --engine} whose {@code events=discover} is replaced by the publisher, replay socket
     * and topic the engine names for its dp rank at {@code GET /kv_event_sources} (docs/LISTENER.md
     * section 5); any other spec as it is.
     */
    static String discovered(String spec) {
        String marker = ",events=discover";
        int i = spec.indexOf(marker);
        if (i < 0) {
            return spec;
        }
        String head = spec.substring(0, i);
        String rest = spec.substring(i + marker.length());
        if (rest.contains(",replay=") || rest.contains(",topic=")) {
            throw new IllegalArgumentException(
                    "'" + spec + "': events=discover learns replay= and topic= from " + "the engine");
        }
        int eq = head.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("'" + spec + "': expected WORKER[/RANK]=http://HOST:PORT");
        }
        String[] who = head.substring(0, eq).split("/", 2);
        int rank;
        try {
            rank = who.length > 1 ? Integer.parseUnsignedInt(who[1]) : 0;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + spec + "': dp rank '" + who[1] + "' is not a number", e);
        }
        EngineDiscovery.Spec d = EngineDiscovery.Spec.parse(head.substring(eq + 1) + "=" + who[0] + rest);
        List<EngineEndpoint> found;
        try {
            found = EngineDiscovery.discover(d, Duration.ofSeconds(10));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e.getMessage(), e);
        }
        EngineEndpoint ep = found.stream()
                .filter(x -> x.dpRank().orElse(0) == rank)
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException(
                        "'" + spec + "': the engine names no KV-event publisher for dp rank " + rank));
        return head + ",events=" + ep.endpoint()
                + ep.replayEndpoint().map(r -> ",replay=" + r).orElse("")
                + (ep.topic().isEmpty() ? "" : ",topic=" + ep.topic()) + rest;
    }
}
