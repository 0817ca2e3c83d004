package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.util.Locale;
import java.util.Set;

/**
 * One engine's HTTP server: vLLM's OpenAI-compatible routes (the package comment lists them and the
 * files they follow) on a Vert.x {@link HttpServer}. Generation requests go to the engine; the rest
 * is answered here. A POST whose {@code content-type} is not {@code application/json} is refused as
 * vLLM's {@code validate_json_request} refuses it; an unknown path or method gets FastAPI's answer.
 *
 * <p>Thread-safety: requests are handled on Vert.x event loops; the engine calls back from its thread
 * ({@link Exchange} hops onto the request's context).
 */
public final class OpenAiServer {
    private static final Set<String> POSTS = Set.of(
            "/v1/completions",
            "/v1/chat/completions",
            "/inference/v1/generate",
            "/tokenize",
            "/v1/completions/render",
            "/v1/chat/completions/render",
            "/reset_prefix_cache");
    private static final Set<String> GETS = Set.of("/health", "/v1/models", "/metrics", "/kv_event_sources");

    private final Vertx vertx;
    private final Generation.Engine engine;
    private final ApiRequests.Model model;
    private final boolean promptTokensDetails;
    private final long seed;
    private final long created = System.currentTimeMillis() / 1000;
    private HttpServer server;
    private volatile String eventSources = "[]";

    /** A server for {@code engine} (not yet listening). */
    public OpenAiServer(
            Vertx vertx, Generation.Engine engine, ApiRequests.Model model, boolean promptTokensDetails, long seed) {
        this.vertx = vertx;
        this.engine = engine;
        this.model = model;
        this.promptTokensDetails = promptTokensDetails;
        this.seed = seed;
    }

    /**
     * What {@code GET /kv_event_sources} answers: vLLM's bare JSON array (its
     * {@code vllm/entrypoints/serve/kv_events/api_router.py} @ {@code 153c3aa2}), one entry for
     * the one dp rank this engine has: {@code data_parallel_rank}, {@code endpoint},
     * {@code replay_endpoint}, {@code topic}.
     */
    public void eventSources(String endpoint, String replayEndpoint) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        ObjectNode o = a.addObject();
        o.put("data_parallel_rank", 0).put("endpoint", endpoint).put("replay_endpoint", replayEndpoint);
        o.put("topic", "");
        eventSources = a.toString();
    }

    /** Binds {@code host:port} (0: a free port); completes with the bound port. */
    public Future<Integer> listen(String host, int port) {
        server = vertx.createHttpServer(new HttpServerOptions().setHost(host).setPort(port));
        server.requestHandler(this::handle);
        return server.listen().map(HttpServer::actualPort);
    }

    /** Stops listening and closes open connections. */
    public Future<Void> close() {
        return server == null ? Future.succeededFuture() : server.close();
    }

    private void handle(HttpServerRequest req) {
        String path = req.path();
        boolean post = POSTS.contains(path);
        if (!post && !GETS.contains(path)) {
            fail(req.response(), ApiError.noRoute());
            return;
        }
        if (req.method() != (post ? HttpMethod.POST : HttpMethod.GET)) {
            fail(req.response(), ApiError.wrongMethod());
            return;
        }
        if (!post) {
            get(req, path);
            return;
        }
        if (path.equals("/reset_prefix_cache")) { // vLLM's dev-mode route: no body, 200, the result unchecked
            engine.resetPrefixCache();
            req.response().setStatusCode(200).end();
            return;
        }
        String type = req.getHeader("content-type");
        String media = type == null
                ? ""
                : type.toLowerCase(Locale.ROOT).split(";", 2)[0].strip();
        if (!media.equals("application/json")) {
            req.body(); // drain it
            fail(
                    req.response(),
                    ApiError.validation(
                            "1 validation error: {'loc': ['header', 'content-type'], "
                                    + "'msg': \"Unsupported Media Type: Only 'application/json' is allowed\", 'type': 'value_error'}"));
            return;
        }
        req.body().onSuccess(body -> post(req, path, body));
    }

    private void get(HttpServerRequest req, String path) {
        HttpServerResponse resp = req.response();
        switch (path) {
            case "/health" -> resp.setStatusCode(200).end();
            case "/v1/models" ->
                json(resp, ServiceBodies.models(model.name(), model.name(), model.maxModelLen(), created));
            case "/kv_event_sources" ->
                resp.putHeader("content-type", "application/json").end(eventSources);
            default ->
                resp.putHeader("content-type", VllmMetrics.CONTENT_TYPE)
                        .end(VllmMetrics.text(engine.stats(), model.name(), created));
        }
    }

    private void post(HttpServerRequest req, String path, Buffer body) {
        Context context = vertx.getOrCreateContext(); // the request's event loop: the response is written there
        java.util.concurrent.Callable<Object> work = () -> {
            try {
                return prepare(path, Json.object(body), req, context);
            } catch (ApiError e) {
                return e;
            }
        };
        if (!model.tokens().blocks()) {
            answer(req, call(work));
            return;
        }
        // tokenizing blocks: on a worker thread, unordered (requests of one connection's loop in parallel)
        vertx.executeBlocking(work, false)
                .onComplete(
                        r -> answer(req, r.succeeded() ? r.result() : ApiError.internal(String.valueOf(r.cause()))));
    }

    private static Object call(java.util.concurrent.Callable<Object> work) {
        try {
            return work.call();
        } catch (Exception e) {
            return ApiError.internal(String.valueOf(e));
        }
    }

    private void answer(HttpServerRequest req, Object out) {
        switch (out) {
            case ApiError e -> fail(req.response(), e);
            case JsonNode n -> json(req.response(), n);
            case Exchange x -> x.start(engine, outputSeed(x));
            default -> throw new IllegalStateException("unexpected " + out);
        }
    }

    /** Parses and checks the body (tokenizing on a worker thread): an answer, or an exchange to start. */
    private Object prepare(String path, ObjectNode body, HttpServerRequest req, Context context) throws ApiError {
        switch (path) {
            case "/tokenize" -> {
                return tokenize(body);
            }
            case "/v1/completions/render" -> {
                ApiRequests.Parsed p = ApiRequests.completion(body, model);
                return JsonNodeFactory.instance
                        .arrayNode()
                        .add(ServiceBodies.render("cmpl-", p.prompt(), p.maxTokens(), body, p.stream()));
            }
            case "/v1/chat/completions/render" -> {
                ApiRequests.Parsed p = ApiRequests.chat(body, model);
                return ServiceBodies.render("chatcmpl-", p.prompt(), p.maxTokens(), body, p.stream());
            }
            default -> {
                return exchange(path, body, req, context);
            }
        }
    }

    private Exchange exchange(String path, ObjectNode body, HttpServerRequest req, Context context) throws ApiError {
        Exchange.Kind kind = switch (path) {
            case "/v1/completions" -> Exchange.Kind.COMPLETION;
            case "/v1/chat/completions" -> Exchange.Kind.CHAT;
            default -> Exchange.Kind.GENERATE;
        };
        ApiRequests.Parsed p = switch (kind) {
            case COMPLETION -> ApiRequests.completion(body, model);
            case CHAT -> ApiRequests.chat(body, model);
            case GENERATE -> ApiRequests.generate(body, model);
        };
        String base = req.getHeader("X-Request-Id");
        if (base == null) {
            base = p.requestId() != null ? p.requestId() : ServiceBodies.randomUuid();
        }
        String id = switch (kind) {
            case COMPLETION -> "cmpl-" + base;
            case CHAT -> "chatcmpl-" + base;
            case GENERATE -> "generate-tokens-" + base;
        };
        VllmBodies.Head head = new VllmBodies.Head(id, System.currentTimeMillis() / 1000, model.name());
        return new Exchange(kind, p, head, req.response(), context, model.tokens(), promptTokensDetails);
    }

    private ObjectNode tokenize(ObjectNode body) throws ApiError {
        ApiRequests.checkModel(body, model);
        int[] tokens;
        if (body.has("messages")) {
            tokens = model.tokens().chat(body);
        } else {
            JsonNode prompt = body.get("prompt");
            if (prompt == null) {
                throw ApiError.validation(JsonFields.missing("prompt"));
            }
            tokens = model.tokens().completion(body);
        }
        String[] strings = null;
        if (JsonFields.optBool(body, "return_token_strs", false)) {
            strings = new String[tokens.length];
            for (int i = 0; i < tokens.length; i++) {
                strings[i] = model.tokens().decode(tokens[i]);
            }
        }
        return ServiceBodies.tokenize(tokens, model.maxModelLen(), strings);
    }

    /** The seed of a request's output tokens: the process's seed and the prompt (identical requests, identical output). */
    private long outputSeed(Exchange x) {
        return OutputTokens.requestSeed(seed, x.prompt());
    }

    private static void json(HttpServerResponse resp, JsonNode body) {
        resp.putHeader("content-type", "application/json").end(Json.bytes(body));
    }

    private static void fail(HttpServerResponse resp, ApiError e) {
        resp.setStatusCode(e.status())
                .putHeader("content-type", "application/json")
                .end(Json.bytes(e.body()));
    }
}
