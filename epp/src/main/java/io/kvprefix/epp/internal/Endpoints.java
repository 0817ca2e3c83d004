package io.kvprefix.epp.internal;

import io.kvprefix.Worker;
import io.kvprefix.service.EngineSpec;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The engines as the gateway names them: {@code ip:port} (an IPv6 literal in brackets) to the worker
 * the router knows, and back (docs/EPP.md section 3).
 *
 * <p>Thread-safety: immutable after construction.
 */
public final class Endpoints {
    private final Map<String, Worker> byEndpoint = new HashMap<>();
    private final Map<Worker, String> byWorker = new HashMap<>();

    /** The endpoints of {@code engines}. */
    public Endpoints(List<EngineSpec> engines) {
        for (EngineSpec e : engines) {
            String ep = of(e);
            byEndpoint.put(ep, e.worker());
            byWorker.put(e.worker(), ep);
        }
    }

    /** The endpoint of an engine: its base URL's host and port. */
    public static String of(EngineSpec e) {
        String h = e.host();
        return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + e.port();
    }

    /** The worker at {@code endpoint}, or null. */
    public Worker worker(String endpoint) {
        return byEndpoint.get(endpoint.strip());
    }

    /** The endpoint of {@code worker}, or null. */
    public String endpoint(Worker worker) {
        return byWorker.get(worker);
    }

    /** The workers among {@code endpoints} this picker knows (the unknown ones are left out). */
    public Set<Worker> workers(List<String> endpoints) {
        Set<Worker> out = new HashSet<>();
        for (String ep : endpoints) {
            Worker w = worker(ep);
            if (w != null) {
                out.add(w);
            }
        }
        return out;
    }
}
