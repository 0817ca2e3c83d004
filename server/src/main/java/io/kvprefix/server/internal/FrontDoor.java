package io.kvprefix.server.internal;

import io.kvprefix.service.AdmissionSlot;
import io.kvprefix.service.ClassifiedRequest;
import io.kvprefix.service.RouteApi;
import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.PoolOptions;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * One event loop's share of {@code kvprefix serve} (docs/SERVE.md section 1): an HTTP server on the
 * shared port and a pooled HTTP client to the engines, both on this verticle's event loop. Requests
 * are dispatched by path: {@code /health}, {@code /metrics}, {@code /v1/models} and the route API are
 * answered here; everything else is classified, admitted, routed and proxied ({@link Exchange}).
 *
 * <p>Thread-safety: each instance is confined to its event loop; the service it shares is thread-safe.
 */
public final class FrontDoor extends VerticleBase {
    private final RouterService service;
    private final FrontDoorSettings settings;
    private final Counters counters;
    private HttpServer server;
    private HttpClientAgent client;

    public FrontDoor(RouterService service, FrontDoorSettings settings, Counters counters) {
        this.service = service;
        this.settings = settings;
        this.counters = counters;
    }

    @Override
    public Future<?> start() {
        client = vertx.httpClientBuilder()
                .with(new HttpClientOptions()
                        .setKeepAlive(true)
                        .setKeepAliveTimeout(60)
                        .setPipelining(false)
                        .setDecompressionSupported(false)
                        .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, settings.connectTimeoutMillis())))
                .with(new PoolOptions()
                        .setHttp1MaxSize(settings.maxEngineConnections())
                        .setMaxWaitQueueSize(-1))
                .withConnectHandler(c -> {
                    counters.engineConnections.incrementAndGet();
                    c.closeHandler(v -> counters.engineConnections.decrementAndGet());
                })
                .build();
        server = vertx.createHttpServer(new HttpServerOptions()
                        .setHost(settings.host())
                        .setPort(settings.port())
                        .setIdleTimeout((int) Math.max(1, settings.idleTimeoutMillis()))
                        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                        .setCompressionSupported(false)
                        .setHandle100ContinueAutomatically(true)
                        .setMaxHeaderSize(64 * 1024))
                .connectionHandler(c -> {
                    counters.clientConnections.incrementAndGet();
                    c.closeHandler(v -> counters.clientConnections.decrementAndGet());
                })
                .requestHandler(this::handle);
        return server.listen();
    }

    /** The port this instance's server bound. */
    public int actualPort() {
        return server.actualPort();
    }

    @Override
    public Future<?> stop() {
        return server.close().eventually(() -> client.close());
    }

    private void handle(HttpServerRequest req) {
        counters.requests.incrementAndGet();
        String path = req.path();
        HttpMethod m = req.method();
        if (m == HttpMethod.GET || m == HttpMethod.HEAD) {
            switch (path) {
                case "/health" -> {
                    String why = service.notReady();
                    json(req.response(), why == null ? 200 : 503, service.healthJson());
                    return;
                }
                case "/metrics" -> {
                    vertx.executeBlocking(service::scrape, false).onComplete(ar -> {
                        if (ar.succeeded()) {
                            req.response()
                                    .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                                    .end(ar.result());
                        } else {
                            req.response().setStatusCode(500).end(String.valueOf(ar.cause()));
                        }
                    });
                    return;
                }
                case "/v1/models" -> {
                    json(req.response(), 200, service.modelsJson());
                    return;
                }
                default -> {}
            }
        }
        readBody(req, body -> {
            if (RouteApi.handles(path)) {
                routeApi(req, body);
            } else {
                proxy(req, body);
            }
        });
    }

    /** Reads the whole body, up to the limit (413 past it: the connection then closes). */
    private void readBody(HttpServerRequest req, java.util.function.Consumer<Buffer> then) {
        long max = service.maxBodyBytes();
        String cl = req.getHeader("content-length");
        if (cl != null) {
            long n;
            try {
                n = Long.parseLong(cl.strip());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n > max) {
                tooLarge(req);
                return;
            }
        }
        Buffer acc = Buffer.buffer();
        boolean[] refused = {false};
        req.handler(b -> {
            if (refused[0]) {
                return;
            }
            if (acc.length() + (long) b.length() > max) {
                refused[0] = true;
                tooLarge(req);
            } else {
                acc.appendBuffer(b);
            }
        });
        req.endHandler(v -> {
            if (!refused[0]) {
                then.accept(acc);
            }
        });
    }

    private void tooLarge(HttpServerRequest req) {
        HttpServerResponse r = req.response().putHeader("connection", "close");
        sendError(r, service.tooLarge()).onComplete(v -> req.connection().close());
    }

    private void routeApi(HttpServerRequest req, Buffer body) {
        byte[] b = body.getBytes();
        vertx.executeBlocking(() -> service.routeApi().handle(req.method().name(), req.path(), b), false)
                .onComplete(ar -> {
                    if (ar.failed()) {
                        sendError(
                                req.response(),
                                new ServiceException(
                                        500, "server_error", "internal_error", null, String.valueOf(ar.cause())));
                        return;
                    }
                    RouteApi.Answer a = ar.result();
                    if (a.status() == 204) {
                        req.response().setStatusCode(204).end();
                    } else {
                        json(req.response(), a.status(), a.body());
                    }
                });
    }

    private void proxy(HttpServerRequest req, Buffer body) {
        ClassifiedRequest c;
        try {
            c = service.classify(req.method().name(), req.path(), body.getBytes());
        } catch (ServiceException e) {
            sendError(req.response(), e);
            return;
        }
        CompletableFuture<AdmissionSlot> admitted = service.admit();
        if (admitted.isDone()) {
            admitted(req, body, c, admitted);
            return;
        }
        Context ctx = vertx.getOrCreateContext();
        req.response().closeHandler(v -> admitted.cancel(false)); // gone while queued: give the place up
        admitted.whenComplete((s, e) -> ctx.runOnContext(v -> admitted(req, body, c, admitted)));
    }

    private void admitted(HttpServerRequest req, Buffer body, ClassifiedRequest c, CompletableFuture<AdmissionSlot> f) {
        AdmissionSlot slot;
        try {
            slot = f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof ServiceException se) {
                sendError(req.response(), se);
            }
            return;
        } catch (java.util.concurrent.CancellationException e) {
            return; // the client went away while queued
        }
        if (req.response().closed()) {
            slot.release();
            return;
        }
        if (!service.needsBlockingRoute(c)) {
            try {
                forward(req, body, service.route(c, slot));
            } catch (ServiceException e) {
                sendError(req.response(), e);
            } catch (RuntimeException e) {
                sendError(
                        req.response(),
                        new ServiceException(500, "server_error", "internal_error", null, String.valueOf(e)));
            }
            return;
        }
        vertx.executeBlocking(() -> service.route(c, slot), false).onComplete(ar -> {
            if (ar.failed()) {
                sendError(
                        req.response(),
                        ar.cause() instanceof ServiceException se
                                ? se
                                : new ServiceException(
                                        500, "server_error", "internal_error", null, String.valueOf(ar.cause())));
            } else if (req.response().closed()) {
                ar.result().cancelled();
            } else {
                forward(req, body, ar.result());
            }
        });
    }

    private void forward(HttpServerRequest req, Buffer body, RoutedRequest r) {
        new Exchange(req, body, r, client, settings, counters).send();
    }

    private static void json(HttpServerResponse r, int status, byte[] body) {
        r.setStatusCode(status).putHeader("content-type", "application/json").end(Buffer.buffer(body));
    }

    /** Answers {@code e} as an OpenAI error body (nothing if the response has begun or the client is gone). */
    static Future<Void> sendError(HttpServerResponse r, ServiceException e) {
        if (r.headWritten() || r.closed()) {
            return Future.succeededFuture();
        }
        byte[] b = e.toJson().getBytes(StandardCharsets.UTF_8);
        return r.setStatusCode(e.status())
                .putHeader("content-type", "application/json")
                .end(Buffer.buffer(b));
    }
}
