package io.kvprefix.spring;

import io.kvprefix.service.RouterService;
import io.kvprefix.spring.internal.KvRouteFilter;
import java.util.Objects;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;

/**
 * The {@code KvAwareRouting} gateway filter: on the route it is given to, each request is routed by
 * the router service to the engine that holds the most of its prompt's KV cache, at the least cost
 * (docs/SPRING.md section 2). The route's own URI is replaced by the chosen engine's base URL, the path
 * and query kept; the response carries {@code x-kvprefix-worker}, {@code x-kvprefix-cached-blocks} and
 * {@code x-kvprefix-route} (docs/SERVE.md section 2).
 *
 * <pre>{@code
 * spring.cloud.gateway.server.webflux.routes[0]:
 *   id: llm
 *   uri: http://kvprefix          # replaced per request by the chosen engine
 *   predicates: [ Path=/v1/** ]
 *   filters: [ KvAwareRouting ]
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; its filters share the one router service.
 */
public class KvAwareRoutingGatewayFilterFactory
        extends AbstractGatewayFilterFactory<KvAwareRoutingGatewayFilterFactory.Config> {
    private final RouterService service;

    /** The factory over {@code service}, the one the auto-configuration made. */
    public KvAwareRoutingGatewayFilterFactory(RouterService service) {
        super(Config.class);
        this.service = Objects.requireNonNull(service, "service");
    }

    @Override
    public GatewayFilter apply(Config config) {
        return new KvRouteFilter(service);
    }

    /**
     * The filter's configuration: it has none (the router service's is {@code kvprefix.*}).
     *
     * <p>Thread-safety: immutable.
     */
    public static class Config {
        /** The empty configuration. */
        public Config() {}
    }
}
