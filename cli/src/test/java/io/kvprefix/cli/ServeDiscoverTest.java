package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.service.EngineSpec;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;

/**
 * {@code kvprefix serve --engine W=http://HOST:PORT,events=discover} (docs/LISTENER.md section 5):
 * the stand-in engine's {@code GET /kv_event_sources} names its publisher and replay socket, which
 * become the engine's {@code events=} and {@code replay=}; an engine that does not answer, or names
 * no publisher for the rank, is refused in one line.
 */
class ServeDiscoverTest {
    @Test
    void anEngineNamesItsOwnPublisher() {
        try (Standin engines =
                Standin.start(StandinSettings.builder().timeScale(0.05).build())) {
            Standin.BoundEngine e = engines.engines().get(0);
            String url = "http://127.0.0.1:" + e.http();
            String spec = ServeCommand.discovered(e.worker() + "=" + url + ",events=discover,format=vllm");
            assertEquals(
                    e.worker() + "=" + url + ",events=tcp://127.0.0.1:" + e.events() + ",replay=tcp://127.0.0.1:"
                            + e.replay() + ",format=vllm",
                    spec);
            EngineSpec parsed = EngineSpec.parse(spec);
            assertEquals(
                    "tcp://127.0.0.1:" + e.events(),
                    parsed.events().orElseThrow().endpoint());
            IllegalArgumentException noRank = assertThrows(
                    IllegalArgumentException.class,
                    () -> ServeCommand.discovered(e.worker() + "/3=" + url + ",events=discover"));
            assertTrue(noRank.getMessage().contains("no KV-event publisher for dp rank 3"), noRank.getMessage());
            assertEquals("1=http://h:1", ServeCommand.discovered("1=http://h:1"), "other specs as they are");
        }
        assertThrows(UncheckedIOException.class, () -> ServeCommand.discovered("1=http://127.0.0.1:1,events=discover"));
    }
}
