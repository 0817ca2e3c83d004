package io.kvprefix.spring.internal;

import io.kvprefix.service.ServiceException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the filter writes itself: the router's OpenAI-style error bodies (docs/SERVE.md section 4),
 * and the request with its body read once and replayed, byte for byte, to the engine (and again to
 * the next engine on a retry).
 *
 * <p>Thread-safety: stateless.
 */
final class Answers {
    private Answers() {}

    /** Answers {@code e} as an OpenAI error body (nothing once the response has begun). */
    static Mono<Void> error(ServerHttpResponse r, ServiceException e) {
        if (r.isCommitted()) {
            return Mono.empty();
        }
        byte[] b = e.toJsonBytes();
        r.setStatusCode(HttpStatusCode.valueOf(e.status()));
        r.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        r.getHeaders().setContentLength(b.length);
        return r.writeWith(Mono.fromSupplier(() -> r.bufferFactory().wrap(b)));
    }

    /** {@code req} with {@code body} as its body: read as often as it is forwarded, its length set anew. */
    static ServerHttpRequest withBody(ServerHttpRequest req, byte[] body) {
        HttpHeaders h = new HttpHeaders();
        h.addAll(req.getHeaders());
        h.remove(HttpHeaders.TRANSFER_ENCODING);
        h.setContentLength(body.length);
        return new ServerHttpRequestDecorator(req) {
            @Override
            public HttpHeaders getHeaders() {
                return h;
            }

            @Override
            public Flux<DataBuffer> getBody() {
                return Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)));
            }
        };
    }

    /** A short reason for an engine's failure, for the log and the engine's down reason. */
    static String describe(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ConnectException) {
                return "connection refused";
            }
        }
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }

    /** An SSE event with the error, after a blank line if the last event was cut, then {@code [DONE]}. */
    static byte[] errorEvents(ServiceException e, boolean needsBlankLine) {
        String s = (needsBlankLine ? "\n\n" : "") + "data: " + e.toJson() + "\n\ndata: [DONE]\n\n";
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
