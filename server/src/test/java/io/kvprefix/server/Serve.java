package io.kvprefix.server;

import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import io.kvprefix.standin.testing.RouterHttp;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code kvprefix serve} in process for the tests, in front of stand-in engines, with the client and
 * helpers every router test uses ({@link RouterHttp}).
 */
final class Serve extends RouterHttp {
    final RouterService service;
    final ServeServer server;

    private Serve(RouterService service, ServeServer server) {
        this.service = service;
        this.server = server;
    }

    /** The router over {@code engines}, with {@code options} changed by {@code tune}, on a free port. */
    static Serve start(List<EngineSpec> engines, Consumer<ServiceOptions> tune) {
        // checks every 200 ms, each with a generous deadline for a loaded machine
        ServiceOptions o =
                RouterService.builder().healthInterval(Duration.ofMillis(200)).healthTimeout(Duration.ofSeconds(5));
        engines.forEach(o::engine);
        tune.accept(o);
        RouterService s = o.build();
        try {
            return new Serve(
                    s,
                    ServeServer.start(
                            s, ServeServer.options().host("127.0.0.1").port(0).eventLoops(2)));
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    @Override
    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    @Override
    public void close() {
        server.close();
        service.close();
    }
}
