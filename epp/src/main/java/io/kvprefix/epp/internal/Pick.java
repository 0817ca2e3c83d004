package io.kvprefix.epp.internal;

import io.kvprefix.Worker;
import io.kvprefix.service.AdmissionSlot;
import io.kvprefix.service.ClassifiedRequest;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

/**
 * The pick of one request, on the router service as {@code serve} routes (docs/EPP.md section 3):
 * classify the body, take an admission slot (429 when the queue is full), route among the subset hint
 * if there is one (503 when none of it is an engine up), and name the choice with the next-best
 * engines after it as the gateway's ordered fallback list.
 *
 * <p>Thread-safety: thread-safe (the service is); {@link #choose} blocks while a text or chat prompt
 * is tokenized and while the request waits for a slot.
 */
public final class Pick {
    /**
     * A pick: the routed request, which carries the load, and the list sent to the gateway.
     *
     * <p>Thread-safety: immutable.
     *
     * @param routed the request as routed (its lifecycle follows the response)
     * @param endpoints the ordered list {@code ip:port,ip:port}, the choice first
     */
    public record Choice(RoutedRequest routed, String endpoints) {}

    private final RouterService service;
    private final Endpoints endpoints;
    private final int fallbacks;

    public Pick(RouterService service, int fallbacks) {
        this.service = service;
        this.endpoints =
                new Endpoints(service.engines().stream().map(s -> s.spec()).toList());
        this.fallbacks = fallbacks;
    }

    /** The engines by endpoint. */
    public Endpoints endpoints() {
        return endpoints;
    }

    /** 413 for a body over the service's limit. */
    public ServiceException tooLarge() {
        return service.tooLarge();
    }

    /**
     * Routes one request.
     *
     * @param subset the endpoints of the gateway's subset hint, or null without one
     * @throws ServiceException the answer to send instead (400, 404, 413, 429, 503)
     */
    public Choice choose(String method, String path, byte[] body, List<String> subset) throws ServiceException {
        ClassifiedRequest c;
        try {
            c = service.classify(method, path, body);
        } catch (ServiceException e) {
            if (e.code().equals("model_not_found") && service.engines().stream().noneMatch(s -> s.up())) {
                // the models are learnt from the engines: with none up, this is GIE's "no ready endpoint"
                throw ServiceException.noEngine("No engine is up (" + e.getMessage() + ")");
            }
            throw e;
        }
        Predicate<Worker> among = null;
        if (subset != null) {
            Set<Worker> allowed = endpoints.workers(subset);
            if (allowed.isEmpty()) {
                throw ServiceException.noEngine("None of the subset's endpoints (" + String.join(",", subset)
                        + ") is an engine of this picker");
            }
            among = allowed::contains;
        }
        AdmissionSlot slot = admit();
        RoutedRequest r = service.route(c, slot, among);
        StringBuilder list = new StringBuilder(endpoints.endpoint(r.worker()));
        if (fallbacks > 0) {
            for (EngineSpec e : r.fallbacks(fallbacks)) {
                list.append(',').append(Endpoints.of(e));
            }
        }
        return new Choice(r, list.toString());
    }

    private AdmissionSlot admit() throws ServiceException {
        try {
            return service.admit().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof ServiceException se) {
                throw se;
            }
            throw new ServiceException(500, "server_error", "internal_error", null, String.valueOf(e.getCause()));
        } catch (CancellationException e) {
            throw ServiceException.noEngine("The router is shutting down");
        }
    }
}
