package io.kvprefix.standin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.standin.testing.StandinProcess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The process as others use it: one {@code READY} line with every engine's worker id and ports, each
 * port answering; it stops cleanly on SIGTERM and when its standard input closes, and a SIGKILL leaves
 * nothing bound (the ports can be bound again).
 */
class StandinProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Process start(String... args) throws Exception {
        return new ProcessBuilder(StandinProcess.command(args))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    private static JsonNode ready(Process p) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertTrue(line != null && line.startsWith("READY {"), "the first line: " + line);
        return JSON.readTree(line.substring("READY ".length()));
    }

    @Test
    void readyNamesEveryEngineAndSigtermStopsIt() throws Exception {
        Process p = start("--engines", "3", "--worker-id", "7", "--time-scale", "0.01");
        try {
            JsonNode engines = ready(p).get("engines");
            assertEquals(3, engines.size());
            for (int i = 0; i < 3; i++) {
                JsonNode e = engines.get(i);
                assertEquals(7 + i, e.get("worker").asLong());
                assertEquals(List.of("worker", "http", "events", "replay"), fieldNames(e));
                assertEquals(200, Http.get(e.get("http").asInt(), "/health").statusCode());
            }
            p.destroy(); // SIGTERM
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "stopped on SIGTERM");
            assertEquals(143, p.exitValue(), "the JVM's status after SIGTERM");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void closingStandardInputStopsItCleanly() throws Exception {
        Process p = start("--time-scale", "0.01");
        try {
            ready(p);
            p.getOutputStream().close();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "stopped when standard input closed");
            assertEquals(0, p.exitValue());
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void aKilledProcessLeavesItsPortsFree() throws Exception {
        Process p = start("--time-scale", "0.01");
        JsonNode e;
        try {
            e = ready(p).get("engines").get(0);
        } finally {
            p.destroyForcibly(); // SIGKILL: no clean stop at all
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        try (Standin again = Standin.start(StandinSettings.builder()
                .ports(
                        e.get("http").asInt(),
                        e.get("events").asInt(),
                        e.get("replay").asInt())
                .build())) {
            assertEquals(e.get("http").asInt(), again.engines().get(0).http());
            assertEquals(200, Http.get(again.engines().get(0).http(), "/health").statusCode());
        }
    }

    private static List<String> fieldNames(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
