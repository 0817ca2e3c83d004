package io.kvprefix.spring;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.service.RouterService;
import io.kvprefix.standin.testing.RouterHttp;
import io.kvprefix.standin.testing.StandinProcess;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Spring Cloud Gateway application started in the test on a free port, with the starter's
 * auto-configuration, in front of stand-in engines: route {@code llm} ({@code /v1/**}, KV-aware) and
 * route {@code plain} ({@code /plain/v1/**}, the gateway's round-robin load balancer over the same
 * engines), with the client and helpers every router test uses ({@link RouterHttp}).
 */
final class Gateway extends RouterHttp {
    final ConfigurableApplicationContext context;
    final RouterService service;
    final int port;

    private Gateway(ConfigurableApplicationContext context) {
        this.context = context;
        this.service = context.getBean(RouterService.class);
        this.port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    /** The properties of the two routes over {@code engines}, the KV-aware one with the engines' event sockets. */
    static Map<String, Object> routes(List<StandinProcess.Engine> engines) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("server.port", "0");
        p.put("server.address", "127.0.0.1");
        String r = "spring.cloud.gateway.server.webflux.routes";
        p.put(r + "[0].id", "llm");
        p.put(r + "[0].uri", "http://kvprefix.invalid");
        p.put(r + "[0].predicates[0]", "Path=/v1/**");
        p.put(r + "[0].filters[0]", "KvAwareRouting");
        p.put(r + "[1].id", "plain");
        p.put(r + "[1].uri", "lb://engines");
        p.put(r + "[1].predicates[0]", "Path=/plain/**");
        p.put(r + "[1].filters[0]", "StripPrefix=1");
        for (int i = 0; i < engines.size(); i++) {
            StandinProcess.Engine e = engines.get(i);
            p.put("kvprefix.engines[" + i + "]", e.specText());
            p.put("spring.cloud.discovery.client.simple.instances.engines[" + i + "].uri", e.url());
        }
        // checks every 200 ms, each with a generous deadline for a loaded machine
        p.put("kvprefix.health-interval", "200ms");
        p.put("kvprefix.health-timeout", "5s");
        p.put("management.endpoints.web.exposure.include", "health,prometheus");
        p.put("spring.main.banner-mode", "off");
        return p;
    }

    static Gateway start(Map<String, Object> properties) {
        return new Gateway(new SpringApplicationBuilder(TestGateway.class)
                .properties(properties)
                .run());
    }

    @Override
    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** A POST whose body is read line by line as it arrives. */
    List<Line> stream(String path, String json) throws IOException, InterruptedException {
        return stream(path, json, l -> {}).body();
    }

    /** The router's explanation of {@code body} (the route API's explain, on the gateway's own service). */
    JsonNode explain(String body) {
        var a = service.routeApi().handle("POST", "/kvprefix/v1/explain", body.getBytes(StandardCharsets.UTF_8));
        return json(new String(a.body(), StandardCharsets.UTF_8));
    }

    /** The depth the index gives worker {@code w} for {@code body}. */
    int depth(String body, String w) {
        for (JsonNode e : explain(body).get("workers")) {
            if (e.get("worker").asText().equals(w)) {
                return e.get("depth").asInt();
            }
        }
        throw new AssertionError("no worker " + w);
    }

    @Override
    public void close() {
        context.close();
    }
}
