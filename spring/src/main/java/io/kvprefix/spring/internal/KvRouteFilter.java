package io.kvprefix.spring.internal;

import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.RouterService;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.netty.Connection;

/**
 * The filter {@code KvAwareRouting} puts on a route (docs/SPRING.md section 3). It runs before the
 * gateway's response writer, so that the writer writes into the {@link LifecycleResponse} it installs;
 * it marks the exchange for the {@link RoutingStep}, which routes it later in the chain, and it ends
 * the routed request if the exchange ends without the response having done so (cancelled, or failed).
 *
 * <p>Thread-safety: thread-safe (stateless; each exchange gets its own {@link KvExchange}).
 */
public final class KvRouteFilter implements GatewayFilter, Ordered {
    /** Just before {@link NettyWriteResponseFilter}, which must see the decorated response. */
    public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

    private final RouterService service;

    public KvRouteFilter(RouterService service) {
        this.service = service;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
        KvExchange state = new KvExchange(service);
        exchange.getAttributes().put(KvExchange.ATTRIBUTE, state);
        ServerWebExchange decorated = exchange.mutate()
                .response(new LifecycleResponse(exchange.getResponse(), state))
                .build();
        // the client's connection closing mid-exchange is the disconnect: the server completes (not cancels) the write
        Channel client = channelOf(exchange.getRequest());
        ChannelFutureListener gone = f -> state.cancelled();
        if (client != null) {
            client.closeFuture().addListener(gone);
        }
        return chain.filter(decorated).doFinally(signal -> {
            if (client != null) {
                client.closeFuture().removeListener(gone);
            }
            if (signal == SignalType.CANCEL) {
                state.cancelled(); // the client went away; the gateway closes the engine's connection
                return;
            }
            RoutedRequest r = state.routed();
            if (r != null && !r.isDone()) {
                if (signal == SignalType.ON_COMPLETE) {
                    r.firstByte();
                    r.completed();
                } else {
                    r.failed("the exchange failed", false);
                }
            }
        });
    }

    /** The client connection's Netty channel (the gateway runs on Reactor Netty), or null on another server. */
    private static Channel channelOf(ServerHttpRequest req) {
        Object n = ServerHttpRequestDecorator.getNativeRequest(req);
        return n instanceof Connection c ? c.channel() : null;
    }

    @Override
    public String toString() {
        return "[KvAwareRouting]";
    }
}
