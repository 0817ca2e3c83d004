package io.kvprefix.service;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.MatchExplanation;
import io.kvprefix.RouteExplanation;
import io.kvprefix.Router;
import io.kvprefix.service.internal.Classifier;
import io.kvprefix.service.internal.EngineRegistry;
import java.nio.charset.StandardCharsets;

/**
 * The JSON route API for routers written in other languages (docs/SERVE.md section 3), independent of
 * any HTTP stack: a front door hands it the method, path and body of a request under
 * {@code /kvprefix/v1/} and sends back the {@link Answer}.
 *
 * <ul>
 *   <li>{@code POST /kvprefix/v1/route} with a request body ({@code messages}, {@code prompt} or
 *       {@code token_ids}, and {@code model}): routes it without forwarding, charges the chosen
 *       engine, and answers the choice, every member's cached depth and a decision id;
 *   <li>{@code POST /kvprefix/v1/route/ID/first-token}: the first token is out (the prefill load ends);
 *   <li>{@code POST /kvprefix/v1/route/ID/done}: the request is done (its load ends); a decision that
 *       gets neither ends at its expiry;
 *   <li>{@code POST /kvprefix/v1/explain} with a request body: why the router would route it where it
 *       would (docs/SPEC.md section 4.1), charging nothing.
 * </ul>
 *
 * <p>Thread-safety: thread-safe. Routing a text or chat prompt blocks while it is tokenized
 * ({@link RouterService#needsBlockingRoute}).
 */
public final class RouteApi {
    /** The prefix of every path this API answers. */
    public static final String PREFIX = "/kvprefix/v1/";

    /**
     * An answer: an HTTP status and a JSON body (empty for 204).
     *
     * <p>Thread-safety: immutable (do not change the array).
     *
     * @param status the HTTP status
     * @param body the JSON body, UTF-8
     */
    public record Answer(int status, byte[] body) {}

    private final RouterService service;

    RouteApi(RouterService service) {
        this.service = service;
    }

    /** True if {@code path} belongs to this API. */
    public static boolean handles(String path) {
        return path.startsWith(PREFIX);
    }

    /** Answers a request to this API ({@link #handles} its path). */
    public Answer handle(String method, String path, byte[] body) {
        try {
            if (!method.equals("POST")) {
                throw new ServiceException(
                        405, "invalid_request_error", "method_not_allowed", null, path + " takes POST");
            }
            String rest = path.substring(PREFIX.length());
            if (rest.equals("route")) {
                return route(body);
            }
            if (rest.equals("explain")) {
                return explain(body);
            }
            if (rest.startsWith("route/")) {
                int slash = rest.indexOf('/', 6);
                String id = slash < 0 ? "" : rest.substring(6, slash);
                String call = slash < 0 ? "" : rest.substring(slash + 1);
                if (call.equals("first-token") || call.equals("done")) {
                    return end(id, call.equals("done"));
                }
            }
            throw new ServiceException(
                    404,
                    "invalid_request_error",
                    "not_found",
                    null,
                    "No such route API path: " + path + " (route, route/ID/first-token, route/ID/done, explain)");
        } catch (ServiceException e) {
            return new Answer(e.status(), e.toJsonBytes());
        }
    }

    private ClassifiedRequest classify(byte[] body) throws ServiceException {
        ObjectNode probe = Classifier.classify("POST", "/v1/completions", body).body();
        String path;
        if (probe.has("messages")) {
            path = "/v1/chat/completions";
        } else if (probe.has("prompt")) {
            path = "/v1/completions";
        } else if (probe.has("token_ids") || probe.has("input_ids")) {
            path = "/inference/v1/generate";
        } else {
            throw ServiceException.badRequest(
                    "invalid_request", null, "A route request needs 'messages', 'prompt' or 'token_ids'");
        }
        return service.classify("POST", path, body);
    }

    private Answer route(byte[] body) throws ServiceException {
        ClassifiedRequest req = classify(body);
        RoutedRequest r = service.route(req, null);
        String id = service.decisions().open(r);
        if (id == null) {
            r.expired();
            throw service.error(new ServiceException(
                    429,
                    "rate_limit_error",
                    "too_many_decisions",
                    null,
                    "Too many route decisions are open; end them with their done call"));
        }
        ObjectNode out = Classifier.JSON.createObjectNode();
        out.put("decision_id", id);
        out.put("expires_in_ms", service.decisions().ttlMillis());
        describe(out, r);
        ArrayNode workers = out.putArray("workers");
        for (RouteExplanation.Candidate c :
                explanation(r.router(), r.tokens(), r).workers()) {
            if (c.verdict() != RouteExplanation.Verdict.NOT_A_MEMBER) {
                ObjectNode w = workers.addObject();
                w.put("worker", c.worker().toString());
                url(w, c.worker());
                w.put("cached_blocks", c.depth());
            }
        }
        return json(200, out);
    }

    private static void describe(ObjectNode out, RoutedRequest r) {
        out.put("worker", r.worker().toString());
        out.put("worker_id", Long.toUnsignedString(r.worker().workerId()));
        out.put("dp_rank", Integer.toUnsignedLong(r.worker().dpRank()));
        out.put("url", r.engine().baseUrl().toString());
        out.put("model", r.request().model());
        out.put("route", r.routedByCache() ? "cache" : "load-only");
        if (!r.routedByCache()) {
            out.put("reason", r.loadOnlyReason());
        }
        out.put("cached_blocks", r.cachedBlocks());
        out.put("cached_tokens", r.decision().cachedTokens());
        out.put("input_tokens", r.decision().inputTokens());
        out.put("block_size", r.decision().blockSize());
    }

    private RouteExplanation explanation(Router router, int[] tokens, RoutedRequest r) {
        return tokens == null
                ? router.explain(new long[0], r.request().estimatedTokens())
                : router.explain(tokens, 0, tokens.length, r.hasher());
    }

    private void url(ObjectNode w, io.kvprefix.Worker worker) {
        EngineRegistry.Engine e = service.registry().engine(worker);
        if (e != null) {
            w.put("url", e.spec().baseUrl().toString());
            w.put("up", e.up());
        }
    }

    private Answer end(String id, boolean done) throws ServiceException {
        RoutedRequest r =
                done ? service.decisions().remove(id) : service.decisions().get(id);
        if (r == null) {
            throw new ServiceException(
                    404,
                    "invalid_request_error",
                    "decision_not_found",
                    null,
                    "No open decision '" + id + "' (done, expired or unknown)");
        }
        if (done) {
            r.completed();
        } else {
            r.firstByte();
        }
        return new Answer(204, new byte[0]);
    }

    private Answer explain(byte[] body) throws ServiceException {
        ClassifiedRequest req = classify(body);
        RouterService.Plan p = service.plan(req);
        RouteExplanation x;
        try {
            x = p.tokens() == null
                    ? p.router().explain(new long[0], req.estimatedTokens())
                    : p.router().explain(p.tokens(), 0, p.tokens().length, p.hasher());
        } catch (IllegalStateException e) {
            throw service.error(RouterService.noEngineUp(p.model(), null));
        }
        ObjectNode out = Classifier.JSON.createObjectNode();
        out.put("model", req.model());
        out.put("route", p.reason() == null ? "cache" : "load-only");
        if (p.reason() != null) {
            out.put("reason", p.reason());
        }
        out.put("input_tokens", p.tokens() == null ? req.estimatedTokens() : p.tokens().length);
        out.put("block_size", service.index().hasher().blockSize());
        out.put("query_blocks", x.index().queryBlocks());
        out.put("minimum_depth", x.minimumDepth());
        out.put("below_min_match", x.belowMinimumMatch());
        out.put("preferred", x.preferred().toString());
        ArrayNode workers = out.putArray("workers");
        for (RouteExplanation.Candidate c : x.workers()) {
            ObjectNode w = workers.addObject();
            w.put("worker", c.worker().toString());
            url(w, c.worker());
            w.put("depth", c.depth());
            w.put("predicted_depth", c.predictedDepth());
            w.put("verdict", c.verdict().wireName());
            if (Double.isFinite(c.cost())) {
                w.put("cost", c.cost());
            } else {
                w.putNull("cost");
            }
            MatchExplanation.WorkerStop s = c.stop();
            w.put("stop", s.stop().wireName());
            w.put("resumes_at", s.resumesAt());
            if (s.salt() != null) {
                w.put("salt", s.salt().toString());
                w.put("salt_depth", s.saltDepth());
            }
        }
        return json(200, out);
    }

    private static Answer json(int status, ObjectNode node) {
        return new Answer(status, node.toString().getBytes(StandardCharsets.UTF_8));
    }
}
