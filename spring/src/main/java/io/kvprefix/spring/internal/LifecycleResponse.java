package io.kvprefix.spring.internal;

import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.ServiceException;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The client's response on a KV-aware route, as the gateway's {@code NettyWriteResponseFilter} writes
 * the engine's body into it (docs/SPRING.md section 3): adds the {@code x-kvprefix-*} headers of the
 * engine that answered, and reports each event to its {@link RoutedRequest} as the body passes,
 * chunk by chunk and never held back: the first body byte, the bytes (for the usage block), the end,
 * a body that breaks off (an event stream then ends with the error event and {@code [DONE]}, as
 * serve's does) and a client that goes away (the gateway then closes the engine's connection).
 *
 * <p>Thread-safety: as the response it wraps; the body's signals come in order from one thread at a time.
 */
final class LifecycleResponse extends ServerHttpResponseDecorator {
    private final KvExchange state;

    LifecycleResponse(ServerHttpResponse delegate, KvExchange state) {
        super(delegate);
        this.state = state;
    }

    @Override
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
        RoutedRequest r = state.routed();
        if (r == null || r.isDone()) {
            return super.writeWith(body);
        }
        Watch w = begin(r);
        // the server cancels the body when the client's connection closes (and then completes the write)
        return ended(r, super.writeWith(w.watch(Flux.from(body)).doOnCancel(r::cancelled)));
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
        RoutedRequest r = state.routed();
        if (r == null || r.isDone()) {
            return super.writeAndFlushWith(body);
        }
        Watch w = begin(r);
        // each engine chunk is its own flushed publisher; a break-off becomes one more (the error events)
        return ended(
                r,
                super.writeAndFlushWith(Flux.from(body)
                        .map(p -> w.seen(Flux.from(p)))
                        .onErrorResume(t -> w.brokeOff(t).map(Flux::just))));
    }

    private Watch begin(RoutedRequest r) {
        r.headers().forEach((k, v) -> getHeaders().set(k, v));
        MediaType type = null;
        try {
            type = getHeaders().getContentType();
        } catch (RuntimeException e) {
            // an engine's unparsable content type: not an event stream
        }
        int status = getStatusCode() == null ? 200 : getStatusCode().value();
        r.responseStarted(status, type == null ? null : type.toString());
        return new Watch(
                r, type != null && type.toString().toLowerCase(Locale.ROOT).startsWith("text/event-stream"));
    }

    private static Mono<Void> ended(RoutedRequest r, Mono<Void> write) {
        return write.doOnSuccess(v -> {
                    r.firstByte(); // a response without a body: its end is its first byte
                    r.completed();
                })
                // the engine's break-off was reported as it came (brokeOff); an error here is the client's side
                .doOnError(t -> r.cancelled())
                .doOnCancel(r::cancelled);
    }

    /** The body of one response as it passes. */
    private final class Watch {
        private final RoutedRequest r;
        private final boolean sse;
        private byte last1;
        private byte last2;

        Watch(RoutedRequest r, boolean sse) {
            this.r = r;
            this.sse = sse;
        }

        Flux<DataBuffer> watch(Flux<? extends DataBuffer> body) {
            return seen(body).onErrorResume(this::brokeOff);
        }

        Flux<DataBuffer> seen(Flux<? extends DataBuffer> body) {
            return body.map(b -> {
                r.firstByte();
                int n = b.readableByteCount();
                if (n > 0) {
                    byte[] a = new byte[n];
                    b.toByteBuffer(b.readPosition(), ByteBuffer.wrap(a), 0, n);
                    r.responseBytes(a, 0, n);
                    last2 = n >= 2 ? a[n - 2] : last1;
                    last1 = a[n - 1];
                }
                return (DataBuffer) b;
            });
        }

        /** The engine's body broke off: the engine leaves routing; an event stream ends cleanly with the error. */
        Flux<DataBuffer> brokeOff(Throwable t) {
            String why = "the engine's response broke off: " + Answers.describe(t);
            r.failed(why, true);
            if (!sse || state.gone()) {
                return Flux.error(t);
            }
            ServiceException e = ServiceException.engineFailed("engine " + r.worker() + ": " + why);
            byte[] events = Answers.errorEvents(e, last1 != '\n' || last2 != '\n');
            return Flux.just(bufferFactory().wrap(events));
        }
    }
}
