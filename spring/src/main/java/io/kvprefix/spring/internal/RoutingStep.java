package io.kvprefix.spring.internal;

import static org.springframework.cloud.gateway.support.ServerWebExchangeUtils.CLIENT_RESPONSE_ATTR;
import static org.springframework.cloud.gateway.support.ServerWebExchangeUtils.CLIENT_RESPONSE_CONN_ATTR;
import static org.springframework.cloud.gateway.support.ServerWebExchangeUtils.GATEWAY_ALREADY_ROUTED_ATTR;
import static org.springframework.cloud.gateway.support.ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR;

import io.kvprefix.service.AdmissionSlot;
import io.kvprefix.service.ClassifiedRequest;
import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.RouteToRequestUrlFilter;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The routing step of a KV-aware route (docs/SPRING.md section 3), a global filter that acts only on
 * exchanges its route's {@code KvAwareRouting} filter marked: right after the gateway has computed
 * the request's URL from the route (and after the route's own filters, so a rewritten path is the one
 * classified), it reads the body once, classifies, admits and routes it with the router service, and
 * points the request's URL at the chosen engine, keeping its path and query. A failure before the
 * engine's response head is retried once on the next engine, as serve does; the router's own answers
 * are OpenAI error bodies.
 *
 * <p>Thread-safety: thread-safe (stateless; each exchange's state is its {@link KvExchange}).
 */
public final class RoutingStep implements GlobalFilter, Ordered {
    /** Just after {@link RouteToRequestUrlFilter}, before the load balancer's filter (10150) and the HTTP client's. */
    public static final int ORDER = RouteToRequestUrlFilter.ROUTE_TO_URL_FILTER_ORDER + 100;

    private final Timer decide;

    /** The step; the time from its start to each request's forward is timed in {@code registry}. */
    public RoutingStep(MeterRegistry registry) {
        this.decide = Timer.builder("kvprefix.spring.decide")
                .description("The KV-aware route's own work before the forward: body read, classification,"
                        + " admission and routing (docs/SPRING.md section 3)")
                .register(registry);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
        KvExchange state = exchange.getAttribute(KvExchange.ATTRIBUTE);
        if (state == null) {
            return chain.filter(exchange);
        }
        RouterService service = state.service();
        ServerHttpResponse raw = undecorated(exchange.getResponse());
        ServerHttpRequest req = exchange.getRequest();
        long max = service.maxBodyBytes();
        long t0 = System.nanoTime();
        if (req.getHeaders().getContentLength() > max) {
            return Answers.error(raw, service.tooLarge());
        }
        return DataBufferUtils.join(req.getBody(), (int) Math.min(Integer.MAX_VALUE, max))
                .map(RoutingStep::bytes)
                .defaultIfEmpty(new byte[0])
                .flatMap(body -> route(exchange, chain, state, body, t0))
                .onErrorResume(DataBufferLimitException.class, e -> Answers.error(raw, service.tooLarge()));
    }

    private Mono<Void> route(
            ServerWebExchange exchange, GatewayFilterChain chain, KvExchange state, byte[] body, long t0) {
        RouterService service = state.service();
        ServerHttpResponse raw = undecorated(exchange.getResponse());
        ServerHttpRequest req = exchange.getRequest();
        ClassifiedRequest c;
        try {
            c = service.classify(req.getMethod().name(), req.getPath().value(), body);
        } catch (ServiceException e) {
            return Answers.error(raw, e);
        }
        ServerWebExchange forward =
                exchange.mutate().request(Answers.withBody(req, body)).build();
        Mono<RoutedRequest> routed = Mono.fromFuture(service::admit).flatMap(slot -> decide(state, c, slot));
        return routed.flatMap(r -> {
                    decide.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                    return attempt(forward, chain, state, r);
                })
                .onErrorResume(ServiceException.class, e -> Answers.error(raw, e));
    }

    private static Mono<RoutedRequest> decide(KvExchange state, ClassifiedRequest c, AdmissionSlot slot) {
        RouterService service = state.service();
        Mono<RoutedRequest> m = Mono.fromCallable(() -> service.route(c, slot));
        if (service.needsBlockingRoute(c)) {
            m = m.subscribeOn(Schedulers.boundedElastic()); // the tokenizer blocks
        }
        return m.filter(state::routed); // a client gone meanwhile: cancelled there, nothing forwarded
    }

    /** Sends the request to {@code r}'s engine; until its response head, a failure is retried once elsewhere. */
    private Mono<Void> attempt(
            ServerWebExchange exchange, GatewayFilterChain chain, KvExchange state, RoutedRequest r) {
        URI url = exchange.getRequiredAttribute(GATEWAY_REQUEST_URL_ATTR);
        String pathAndQuery = url.getRawPath() + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
        exchange.getAttributes().put(GATEWAY_REQUEST_URL_ATTR, r.target(pathAndQuery));
        exchange.getAttributes().remove(GATEWAY_ALREADY_ROUTED_ATTR);
        exchange.getAttributes().remove(CLIENT_RESPONSE_ATTR);
        exchange.getAttributes().remove(CLIENT_RESPONSE_CONN_ATTR);
        r.forwarded();
        ServerHttpResponse raw = undecorated(exchange.getResponse());
        return chain.filter(exchange).onErrorResume(t -> {
            if (state.gone() || raw.isCommitted() || r.started()) {
                r.failed(Answers.describe(t), false);
                return Mono.error(t);
            }
            if (t instanceof ResponseStatusException s && s.getStatusCode().value() == 504) {
                r.failed("no answer within the gateway's response timeout", false);
                return Answers.error(
                        raw,
                        ServiceException.engineTimeout(
                                "engine " + r.worker() + " did not answer within the response timeout"));
            }
            RoutedRequest next;
            try {
                next = r.retry(Answers.describe(t));
            } catch (ServiceException e) {
                return Answers.error(raw, e);
            }
            if (!state.routed(next)) {
                return Mono.empty();
            }
            return attempt(exchange, chain, state, next);
        });
    }

    private static ServerHttpResponse undecorated(ServerHttpResponse r) {
        return r instanceof LifecycleResponse d ? d.getDelegate() : r;
    }

    private static byte[] bytes(DataBuffer b) {
        try {
            byte[] a = new byte[b.readableByteCount()];
            b.read(a);
            return a;
        } finally {
            DataBufferUtils.release(b);
        }
    }
}
