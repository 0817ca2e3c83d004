package io.kvprefix.cli;

import io.kvprefix.metrics.MetricsServer;
import io.kvprefix.server.ServeServer;
import io.kvprefix.service.EngineStatus;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import io.kvprefix.zmq.EngineDiscovery;
import io.kvprefix.zmq.EngineEndpoint;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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

    @Mixin
    RouterFlags flags = new RouterFlags();

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
            names = "--event-loops",
            paramLabel = "N",
            description = "event loops serving the port (default: the cores, at most 4)")
    Integer eventLoops;

    @Mixin
    RunFlags run = new RunFlags();

    @Override
    public Integer call() throws Exception {
        ServiceOptions o = serviceOptions();
        ServeServer.Options so = serverOptions();
        run.runFor(); // checked before anything starts
        RouterService built = flags.build(o);
        // the drain: let the front door and the service stop (the snapshot saved) before the JVM goes
        try (Lifecycle life = run.lifecycle("serve"); // closed last
                RouterService service = built;
                ServeServer server = ServeServer.start(service, so);
                MetricsServer metrics = run.metrics(service, host)) {
            long up = RunFlags.up(service);
            life.status("listening on http://" + host + ":" + server.port() + " ("
                    + service.engines().size()
                    + " engine(s), " + up + " up; policy " + flags.policy + ")"
                    + (metrics == null
                            ? ""
                            : "; metrics on port " + metrics.address().getPort()));
            for (EngineStatus s : service.engines()) {
                if (!s.up()) {
                    life.status("engine " + s.spec() + " is not up yet: " + s.downReason());
                }
            }
            run.serveUntilStopped(life, "\"port\":" + server.port(), service, metrics, up);
            life.status(String.format(
                    Locale.ROOT, "stopping (%d requests served)", server.stats().requests()));
            return 0;
        }
    }

    ServiceOptions serviceOptions() {
        return flags.serviceOptions(
                engines,
                "give at least one --engine WORKER=http://HOST:PORT[,events=tcp://HOST:PORT]",
                ServeCommand::discovered);
    }

    ServeServer.Options serverOptions() {
        ServeServer.Options so = ServeServer.options().host(host).port(port);
        so.connectTimeout(Check.seconds("--connect-timeout", connectTimeout));
        so.idleTimeout(Check.seconds("--idle-timeout", idleTimeout));
        if (eventLoops != null) {
            so.eventLoops(eventLoops);
        }
        run.checkMetricsPort();
        return so;
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
