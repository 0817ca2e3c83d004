package io.kvprefix.server.internal;

import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.ServiceException;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.RequestOptions;
import java.net.ConnectException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * One proxied request, from its routing to its end (docs/SERVE.md sections 1 and 5): forwards the
 * body unchanged to the chosen engine, passes the response back as it comes (status, headers less the
 * hop-by-hop ones, plus the {@code x-kvprefix-*} headers; the body chunk by chunk, pausing the engine's
 * response while the client's write queue is full), and reports each event to its
 * {@link RoutedRequest}: first body byte, end, failure, client disconnect. A failure before the
 * engine's response head is retried once on the next engine; a client that goes away aborts the
 * engine's request (for HTTP/1.1, its connection is closed, which vLLM takes as an abort).
 *
 * <p>Thread-safety: confined to the event loop of the client's connection (the HTTP client's
 * callbacks run there too).
 */
final class Exchange {
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final HttpServerRequest req;
    private final HttpServerResponse resp;
    private final Buffer body;
    private final HttpClient client;
    private final FrontDoorSettings settings;
    private final Counters counters;
    private RoutedRequest routed;
    private HttpClientRequest upstream;
    private boolean sse;
    private boolean clientGone;
    private boolean finished;
    private byte last1;
    private byte last2;

    Exchange(
            HttpServerRequest req,
            Buffer body,
            RoutedRequest routed,
            HttpClient client,
            FrontDoorSettings settings,
            Counters counters) {
        this.req = req;
        this.resp = req.response();
        this.body = body;
        this.routed = routed;
        this.client = client;
        this.settings = settings;
        this.counters = counters;
        counters.exchanges.incrementAndGet();
        resp.closeHandler(v -> clientClosed());
    }

    /** Sends the request to the routed engine. */
    void send() {
        EngineSpec e = routed.engine();
        MultiMap headers = MultiMap.caseInsensitiveMultiMap();
        Headers.copy(req.headers(), headers, Headers.REQUEST_DROP);
        RequestOptions o = new RequestOptions()
                .setMethod(req.method())
                .setHost(e.host())
                .setPort(e.port())
                .setURI(e.pathPrefix() + req.uri())
                .setHeaders(headers)
                .setConnectTimeout(settings.connectTimeoutMillis())
                .setIdleTimeout(settings.idleTimeoutMillis());
        RoutedRequest attempt = routed;
        routed.forwarded();
        client.request(o).onComplete(ar -> {
            if (attempt != routed) {
                return;
            }
            if (ar.failed()) {
                beforeResponse(ar.cause());
                return;
            }
            upstream = ar.result();
            if (clientGone) {
                upstream.reset();
                return;
            }
            upstream.send(body).onComplete(r -> {
                if (attempt != routed) {
                    return;
                }
                if (r.failed()) {
                    beforeResponse(r.cause());
                } else {
                    respond(r.result());
                }
            });
        });
    }

    /** The engine could not be reached, or failed before its response head. */
    private void beforeResponse(Throwable t) {
        if (finished) {
            return;
        }
        if (clientGone) {
            end(() -> routed.cancelled());
            return;
        }
        if (isTimeout(t)) {
            routed.failed("no answer within the idle timeout", false);
            fail(ServiceException.engineTimeout(
                    "engine " + routed.worker() + " did not answer within " + settings.idleTimeoutMillis() + " ms"));
            return;
        }
        try {
            routed = routed.retry(describe(t));
        } catch (ServiceException e) {
            fail(e);
            return;
        }
        send();
    }

    private void respond(HttpClientResponse r) {
        if (clientGone) {
            r.request().reset();
            end(() -> routed.cancelled());
            return;
        }
        String type = r.getHeader("content-type");
        sse = type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream");
        routed.responseStarted(r.statusCode(), type);
        resp.setStatusCode(r.statusCode());
        if (r.statusMessage() != null) {
            resp.setStatusMessage(r.statusMessage());
        }
        Headers.copy(r.headers(), resp.headers(), Headers.RESPONSE_DROP);
        routed.headers().forEach(resp::putHeader);
        String length = r.getHeader("content-length");
        if (length != null) {
            resp.putHeader("content-length", length);
        } else {
            resp.setChunked(true);
        }
        resp.writeHead();
        r.handler(buf -> chunk(r, buf));
        r.exceptionHandler(this::midResponse);
        r.endHandler(v -> {
            routed.firstByte();
            end(() -> {
                resp.end();
                routed.completed();
            });
        });
    }

    private void chunk(HttpClientResponse r, Buffer buf) {
        if (finished) {
            return;
        }
        routed.firstByte();
        byte[] b = buf.getBytes();
        routed.responseBytes(b, 0, b.length);
        if (b.length >= 2) {
            last2 = b[b.length - 2];
            last1 = b[b.length - 1];
        } else if (b.length == 1) {
            last2 = last1;
            last1 = b[0];
        }
        resp.write(buf);
        if (resp.writeQueueFull()) {
            r.pause();
            resp.drainHandler(v -> r.resume());
        }
    }

    /** The engine's response broke off (its connection closed or reset, or it went idle too long). */
    private void midResponse(Throwable t) {
        if (finished || clientGone) {
            return; // the client went away and clientClosed reset the engine's request: a cancel, not a failure
        }
        boolean timeout = isTimeout(t);
        String why = timeout
                ? "the engine sent nothing within the idle timeout"
                : "the engine's response broke off: " + describe(t);
        end(() -> {
            routed.failed(why, !timeout);
            if (sse && !clientGone) {
                // a clean end for an event-stream client: the error as an event, then [DONE], as vLLM ends a failed
                // stream
                ServiceException e = timeout
                        ? ServiceException.engineTimeout("engine " + routed.worker() + ": " + why)
                        : ServiceException.engineFailed("engine " + routed.worker() + ": " + why);
                Buffer out = Buffer.buffer();
                if (last1 != '\n' || last2 != '\n') {
                    out.appendString("\n\n");
                }
                out.appendString("data: ")
                        .appendBytes(e.toJsonBytes())
                        .appendString("\n\n")
                        .appendBytes(DONE);
                resp.end(out);
            } else if (!clientGone) {
                resp.reset(); // nothing better to say once a plain body is half sent: the connection closes
            }
        });
    }

    private void clientClosed() {
        if (finished) {
            return;
        }
        clientGone = true; // first: the reset below reports itself to midResponse, which must not blame the engine
        if (upstream != null) {
            upstream.reset(); // HTTP/1.1: closes the engine's connection, which aborts the request there
        }
        end(() -> routed.cancelled());
    }

    /** An error the router answers itself, before any response byte. */
    private void fail(ServiceException e) {
        end(() -> FrontDoor.sendError(resp, e));
    }

    private void end(Runnable r) {
        if (finished) {
            return;
        }
        finished = true;
        counters.exchanges.decrementAndGet();
        r.run();
    }

    /** Vert.x fails a request whose idle timeout ran out with a {@link TimeoutException}. */
    private static boolean isTimeout(Throwable t) {
        return t instanceof TimeoutException;
    }

    static String describe(Throwable t) {
        if (t instanceof ConnectException || t.getCause() instanceof ConnectException) {
            return "connection refused";
        }
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }
}
