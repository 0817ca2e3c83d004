package io.kvprefix.service.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvprefix.Worker;
import io.kvprefix.service.Usage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * The speed-of-light gauge's counters (docs/METRICS.md section 4): the engine's report, the index's
 * prediction and the infinite-cache bound side by side, for requests whose engine reported cached
 * tokens only, and the mismatch alarm past one block either way.
 */
class ServiceMetersGaugeTest {
    private static final Worker W = Worker.of(3);

    @Test
    void theThreeCachedCountsAndTheMismatchAlarm() {
        MeterRegistry reg = new SimpleMeterRegistry();
        ServiceMeters m = new ServiceMeters(reg);
        m.usage(W, new Usage(100, 5, 48), 64, 80, 16); // the index predicted one block more: no alarm
        assertEquals(48, cached(reg, "engine"));
        assertEquals(64, cached(reg, "index"));
        assertEquals(80, cached(reg, "bound"));
        assertNull(mismatch(reg, "over"));
        m.usage(W, new Usage(100, 5, 16), 64, 96, 16); // three blocks more: the index over-reports
        assertEquals(1.0, mismatch(reg, "over").count());
        m.usage(W, new Usage(100, 5, 96), 0, 96, 16); // the engine held what the index did not know
        assertEquals(1.0, mismatch(reg, "under").count());
        m.usage(W, new Usage(100, 5, -1), 64, 96, 16); // no cached tokens reported: none of the three
        m.usage(W, new Usage(100, 5, 0), 0, -1, 16); // a retry: no bound
        assertEquals(48 + 16 + 96, cached(reg, "engine"));
        assertEquals(64 + 64, cached(reg, "index"));
        assertEquals(80 + 96 + 96, cached(reg, "bound"));
        assertEquals(
                400,
                reg.find("kvprefix.service.cache.reported.prompt.tokens")
                        .counter()
                        .count());
    }

    private static double cached(MeterRegistry reg, String source) {
        return reg.find("kvprefix.service.cached.tokens")
                .tag("worker", W.toString())
                .tag("source", source)
                .counter()
                .count();
    }

    private static Counter mismatch(MeterRegistry reg, String direction) {
        return reg.find("kvprefix.service.cache.mismatch")
                .tag("direction", direction)
                .counter();
    }
}
