package io.kvprefix.spring.internal;

import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import io.kvprefix.spring.KvprefixProperties;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.Tokenizers;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds the router service from the {@code kvprefix.*} properties (docs/SPRING.md section 1): the same
 * {@link ServiceOptions} {@code kvprefix serve} fills from its options, so the index, its feed and the
 * routers are the ones serve uses. A bad property fails the application's start with one line naming it.
 *
 * <p>Thread-safety: stateless.
 */
public final class ServiceFactory {
    private ServiceFactory() {}

    /** Admission, health checks and the body's limit, where given. */
    private static void limits(KvprefixProperties p, ServiceOptions o) {
        if (p.getMaxInFlight() != null) {
            o.maxInFlight(p.getMaxInFlight());
        }
        if (p.getMaxQueued() != null) {
            o.maxQueued(p.getMaxQueued());
        }
        if (p.getQueueTimeout() != null) {
            o.queueTimeout(p.getQueueTimeout());
        }
        if (p.getHealthInterval() != null) {
            o.healthInterval(p.getHealthInterval());
        }
        if (p.getHealthTimeout() != null) {
            o.healthTimeout(p.getHealthTimeout());
        }
        if (p.getMaxBody() != null) {
            o.maxBodyBytes(p.getMaxBody());
        }
    }

    /** The service of {@code p}, its meters in {@code registry} (null: a Prometheus registry of its own). */
    public static RouterService build(KvprefixProperties p, MeterRegistry registry) {
        ServiceOptions o = RouterService.builder();
        if (p.getEngines().isEmpty()) {
            throw new IllegalArgumentException(
                    "kvprefix.engines: give at least one engine, WORKER=http://HOST:PORT[,events=tcp://HOST:PORT]");
        }
        for (int i = 0; i < p.getEngines().size(); i++) {
            String e = p.getEngines().get(i);
            try {
                o.engine(EngineSpec.parse(e));
            } catch (IllegalArgumentException x) {
                throw new IllegalArgumentException("kvprefix.engines[" + i + "]: " + x.getMessage(), x);
            }
        }
        if (p.getNats().getUrl() != null) {
            o.nats(p.getNats().getUrl(), p.getNats().getStream());
        }
        if (p.getPolicy() != null) {
            o.policy(p.getPolicy());
        }
        o.inflightPrefills(p.isInflightPrefills());
        o.blockSize(p.getBlockSize());
        if (p.getMemoryBudget() != null) {
            o.memoryBudget(p.getMemoryBudget());
        }
        if (p.getSnapshot() != null) {
            o.snapshot(p.getSnapshot(), p.getSnapshotInterval());
        }
        limits(p, o);
        if (registry != null) {
            o.meterRegistry(registry);
        }
        List<PromptTokenizer> opened = new ArrayList<>();
        try {
            for (Map.Entry<String, String> t : p.getTokenizers().entrySet()) {
                PromptTokenizer pt;
                try {
                    pt = Tokenizers.open(t.getValue());
                } catch (IllegalArgumentException | UnsupportedOperationException x) {
                    throw new IllegalArgumentException("kvprefix.tokenizers." + t.getKey() + ": " + x.getMessage(), x);
                }
                opened.add(pt);
                o.tokenizer(t.getKey(), pt);
            }
            return o.build(); // the service owns the tokenizers from here
        } catch (RuntimeException e) {
            opened.forEach(PromptTokenizer::close);
            throw e;
        }
    }
}
