package io.kvprefix.cli;

import io.kvprefix.epp.EppServer;
import io.kvprefix.metrics.MetricsServer;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix epp}: the Endpoint Picker a Gateway API Inference Extension gateway asks which engine
 * to use (docs/OPERATING.md section 11; the protocol is docs/EPP.md). Builds the router service from
 * the options shared with {@code serve}, starts the ext_proc and health servers, prints one
 * {@code READY {...}} line, and runs until Ctrl-C, SIGTERM or {@code --duration}.
 *
 * <p>Exit status: 0 after a run; 2 for a usage error; 1 if it fails on its way.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "epp",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Serve an Endpoint Picker for the Gateway API Inference Extension (Envoy's ext_proc).",
            "The gateway streams each request to it; it routes the prompt by its cached prefix on",
            "the engines' KV events, as serve does, and names the engine (then fallbacks) in",
            "x-gateway-destination-endpoint and the envoy.lb metadata. gRPC health (liveness,",
            "readiness) is on --health-port. docs/EPP.md; docs/OPERATING.md section 11."
        })
final class EppCommand implements Callable<Integer> {

    @Option(
            names = "--engine",
            paramLabel = "WORKER[/RANK]=IP:PORT[,events=E][,replay=E][,topic=T][,format=F]",
            description = {
                "an engine (repeatable): its worker id, the endpoint the gateway is told (the pod's",
                "IP:PORT, also its HTTP address for health checks), and its KV-event publisher",
                "(events=tcp://HOST:5557) and replay socket, as serve --engine takes them."
            })
    List<String> engines = new ArrayList<>();

    @Option(
            names = "--port",
            paramLabel = "PORT",
            defaultValue = "9002",
            description = "the ext_proc gRPC port (default: ${DEFAULT-VALUE}, GIE's; 0: any free port)")
    int port;

    @Option(
            names = "--health-port",
            paramLabel = "PORT",
            defaultValue = "9003",
            description = "the gRPC health port (default: ${DEFAULT-VALUE}, GIE's; 0: any free port)")
    int healthPort;

    @Option(
            names = "--host",
            paramLabel = "HOST",
            defaultValue = "0.0.0.0",
            description = "address to bind (default: ${DEFAULT-VALUE})")
    String host;

    @Option(
            names = "--fallbacks",
            paramLabel = "N",
            defaultValue = "2",
            description = "next-best engines listed after the choice (default: ${DEFAULT-VALUE})")
    int fallbacks;

    @Mixin
    RouterFlags flags = new RouterFlags();

    @Mixin
    RunFlags run = new RunFlags();

    @Override
    public Integer call() throws Exception {
        ServiceOptions o = serviceOptions();
        EppServer.Options eo =
                EppServer.options().host(host).port(port).healthPort(healthPort).fallbacks(fallbacks);
        run.checkMetricsPort();
        run.runFor(); // checked before anything starts
        RouterService built = flags.build(o);
        try (Lifecycle life = run.lifecycle("epp");
                RouterService service = built;
                EppServer epp = EppServer.start(service, eo);
                MetricsServer metrics = run.metrics(service, host)) {
            long up = RunFlags.up(service);
            life.status("ext_proc on " + host + ":" + epp.port() + ", health on " + epp.healthPort() + " ("
                    + service.engines().size() + " engine(s), " + up + " up; policy " + flags.policy + ")");
            run.serveUntilStopped(
                    life, "\"port\":" + epp.port() + ",\"health_port\":" + epp.healthPort(), service, metrics, up);
            return 0;
        }
    }

    ServiceOptions serviceOptions() {
        return flags.serviceOptions(
                engines,
                "give at least one --engine WORKER=IP:PORT[,events=tcp://HOST:PORT]",
                e -> ServeCommand.discovered(httpForm(e)));
    }

    /** {@code WORKER=IP:PORT,...} as serve's {@code WORKER=http://IP:PORT,...} (a URL given whole is kept). */
    static String httpForm(String spec) {
        int eq = spec.indexOf('=');
        if (eq < 0 || spec.startsWith("http://", eq + 1) || spec.startsWith("https://", eq + 1)) {
            return spec;
        }
        return spec.substring(0, eq + 1) + "http://" + spec.substring(eq + 1);
    }
}
