package io.kvprefix.service.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.RoutingPolicy;
import io.kvprefix.Worker;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.EngineStatus;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * The engines and who may be routed to (docs/SERVE.md section 5): each engine's spec, whether it is
 * up, the models it serves (its {@code /v1/models} answer), and one {@link Router} per model whose
 * members are the up engines serving that model, plus one over every up engine for requests that name
 * no model. An engine goes down when its health check fails or a request could not reach it, and comes
 * back when its health check passes; going down removes it from every router (its load is forgotten),
 * coming back adds it to the routers of the models it serves now.
 *
 * <p>Thread-safety: thread-safe; state changes hold the registry's lock, lookups read concurrent maps
 * and volatile fields.
 */
public final class EngineRegistry {
    /** One engine's state. Thread-safety: volatile fields, changed under the registry's lock. */
    public static final class Engine {
        final EngineSpec spec;
        volatile boolean up;
        volatile boolean everUp;
        volatile String downReason = "not checked yet";
        volatile Map<String, JsonNode> models = Map.of();
        final AtomicLong inFlight = new AtomicLong();

        Engine(EngineSpec spec) {
            this.spec = spec;
        }

        /** The engine's spec. */
        public EngineSpec spec() {
            return spec;
        }

        /** True if it is routed to now. */
        public boolean up() {
            return up;
        }

        /** Requests forwarded to it and not finished. */
        public AtomicLong inFlight() {
            return inFlight;
        }
    }

    private final PrefixIndex index;
    private final RoutingPolicy policy;
    private final boolean inflightPrefills;
    private final Map<Worker, Engine> engines;
    private final ConcurrentHashMap<String, Router> routers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, JsonNode> cards = new ConcurrentHashMap<>();
    private final Router anyModel;
    private final BiConsumer<String, Router> onNewRouter;
    private final BiConsumer<Engine, String> onDown;

    /**
     * @param onNewRouter told of each model's router when it is made (to bind its meters)
     * @param onDown told of each engine that goes down, with the reason
     */
    public EngineRegistry(
            PrefixIndex index,
            RoutingPolicy policy,
            boolean inflightPrefills,
            List<EngineSpec> specs,
            BiConsumer<String, Router> onNewRouter,
            BiConsumer<Engine, String> onDown) {
        this.index = index;
        this.policy = policy;
        this.inflightPrefills = inflightPrefills;
        this.onNewRouter = onNewRouter;
        this.onDown = onDown;
        Map<Worker, Engine> m = new LinkedHashMap<>();
        for (EngineSpec s : specs) {
            if (m.put(s.worker(), new Engine(s)) != null) {
                throw new IllegalArgumentException("worker " + s.worker() + " is given to two engines");
            }
        }
        this.engines = Collections.unmodifiableMap(m);
        this.anyModel = newRouter();
    }

    private Router newRouter() {
        Router.Builder b = Router.builder().index(index).policy(policy);
        return (inflightPrefills ? b.inflightPrefills(true) : b).build();
    }

    /** Every engine, in the order given. */
    public List<Engine> engines() {
        return List.copyOf(engines.values());
    }

    /** The engine of {@code worker}, or null. */
    public Engine engine(Worker worker) {
        return engines.get(worker);
    }

    /** The health check passed: the engine is up, serving {@code models} (id to its model card). */
    public synchronized void healthy(Engine e, Map<String, JsonNode> models) {
        Map<String, JsonNode> before = e.up ? e.models : Map.of();
        e.models = Map.copyOf(models);
        for (var m : models.entrySet()) {
            cards.putIfAbsent(m.getKey(), m.getValue());
            if (!before.containsKey(m.getKey())) {
                routerOf(m.getKey()).addWorker(e.spec.worker());
            }
        }
        for (String gone : before.keySet()) {
            if (!models.containsKey(gone)) {
                routers.get(gone).removeWorker(e.spec.worker());
            }
        }
        if (!e.up) {
            anyModel.addWorker(e.spec.worker());
        }
        e.up = true;
        e.everUp = true;
        e.downReason = null;
    }

    /** The engine failed a health check or a request: it leaves routing until its health check passes. */
    public void down(Engine e, String reason) {
        boolean wasUp;
        synchronized (this) {
            wasUp = e.up;
            e.downReason = reason;
            if (!wasUp) {
                return;
            }
            e.up = false;
            for (String m : e.models.keySet()) {
                routers.get(m).removeWorker(e.spec.worker());
            }
            anyModel.removeWorker(e.spec.worker());
        }
        onDown.accept(e, reason);
    }

    private Router routerOf(String model) {
        return routers.computeIfAbsent(model, m -> {
            Router r = newRouter();
            onNewRouter.accept(m, r);
            return r;
        });
    }

    /** The router of {@code model} (null if no engine ever served it), or of every engine for a null model. */
    public Router router(String model) {
        return model == null ? anyModel : routers.get(model);
    }

    /** Every model any engine has served, sorted. */
    public Set<String> knownModels() {
        return new TreeSet<>(cards.keySet());
    }

    /** The models the up engines serve now, sorted. */
    public Set<String> servedModels() {
        Set<String> out = new TreeSet<>();
        for (Engine e : engines.values()) {
            if (e.up) {
                out.addAll(e.models.keySet());
            }
        }
        return out;
    }

    /** The model card the engines gave for {@code model} (the first seen), or null. */
    public JsonNode card(String model) {
        return cards.get(model);
    }

    /**
     * The LoRA adapter {@code model} names, or null: vLLM lists an adapter in {@code /v1/models} with a
     * {@code parent}, its base model ({@code vllm/entrypoints/openai/serving_models.py}
     * {@code show_available_models} @ {@code 075e9ba825513f0e50ae1a5185d6db0ee405f84e}), and salts its
     * blocks' hashes with the adapter's name, which the KV events carry as {@code lora_name}.
     */
    public String loraName(String model) {
        JsonNode c = model == null ? null : cards.get(model);
        if (c == null) {
            return null;
        }
        JsonNode parent = c.get("parent");
        return parent != null && parent.isTextual() && !parent.asText().equals(model) ? model : null;
    }

    /** The models' routers, by model. */
    public Map<String, Router> routers() {
        return Map.copyOf(routers);
    }

    /** Engines up now. */
    public int upCount() {
        int n = 0;
        for (Engine e : engines.values()) {
            n += e.up ? 1 : 0;
        }
        return n;
    }

    /** Every engine's state now. */
    public List<EngineStatus> status() {
        List<EngineStatus> out = new ArrayList<>(engines.size());
        for (Engine e : engines.values()) {
            out.add(new EngineStatus(
                    e.spec, e.up, e.up ? null : e.downReason, new TreeSet<>(e.models.keySet()), e.inFlight.get()));
        }
        return out;
    }

    /** Closes every router. */
    public void close() {
        anyModel.close();
        routers.values().forEach(Router::close);
    }
}
