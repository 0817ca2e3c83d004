package io.kvprefix.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;

/**
 * The live leg's client (docs/OPERATING.md section 12): the JDK's HTTP client sending a trace's
 * requests to {@code /v1/completions} as streamed token-id prompts, each at its arrival time (open
 * loop, one virtual thread per request), and reading each event stream line by line as it arrives: the
 * time to the first {@code data:} line (the first token), the usage of the last chunk
 * ({@code prompt_tokens_details.cached_tokens}) and the router's headers.
 *
 * <p>Thread-safety: {@link #drive} may be called from one thread at a time; it starts and joins its own.
 */
final class LiveClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One request as the client saw it.
     *
     * @param ttftNanos from sending to the first event ({@code -1} if none came)
     * @param promptTokens the engine's {@code usage.prompt_tokens}
     * @param cachedTokens its {@code usage.prompt_tokens_details.cached_tokens}
     * @param routedBlocks the router's {@code x-kvprefix-cached-blocks}
     * @param worker the router's {@code x-kvprefix-worker}
     * @param error why it failed, or null
     */
    record Outcome(
            long ttftNanos, long promptTokens, long cachedTokens, long routedBlocks, String worker, String error) {}

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private final URI completions;
    private final String model;

    LiveClient(URI base, String model) {
        this.completions = base.resolve("/v1/completions");
        this.model = model;
    }

    /**
     * Sends every request of {@code trace}, request {@code r} at {@code r.timestampMs() * wallPerTraceMs}
     * milliseconds after the first one's, and returns the outcomes in trace order.
     */
    List<Outcome> drive(Trace trace, double wallPerTraceMs) throws InterruptedException {
        List<TraceRequest> rs = trace.requests();
        List<Future<Outcome>> pending = new ArrayList<>(rs.size());
        long start = System.nanoTime();
        long first = rs.isEmpty() ? 0 : rs.get(0).timestampMs();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (TraceRequest r : rs) {
                long due = start + Math.round((r.timestampMs() - first) * wallPerTraceMs * 1e6);
                for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                String body = body(r, trace.tokensPerBlock());
                pending.add(threads.submit(() -> send(body)));
            }
        }
        List<Outcome> out = new ArrayList<>(rs.size());
        for (Future<Outcome> f : pending) {
            out.add(f.resultNow());
        }
        return out;
    }

    /** A streamed completion of the request's tokens (block {@code i} is copies of its id, docs/SPEC.md section 2.3). */
    String body(TraceRequest r, int tokensPerBlock) {
        long[] ids = r.hashIds();
        int length = (int) Math.min(r.inputLength(), (long) ids.length * tokensPerBlock);
        StringBuilder sb = new StringBuilder(32 + length * 7);
        sb.append("{\"model\":\"").append(model).append("\",\"prompt\":[");
        for (int i = 0; i < Math.max(1, length); i++) {
            sb.append(i == 0 ? "" : ",").append(ids.length == 0 ? 0 : (int) ids[i / tokensPerBlock]);
        }
        sb.append("],\"max_tokens\":").append(Math.max(1, r.outputLength()));
        sb.append(",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        return sb.toString();
    }

    /** Sends one body and reads its stream to the end. */
    Outcome send(String body) {
        HttpRequest req = HttpRequest.newBuilder(completions)
                .timeout(Duration.ofSeconds(300))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        long t0 = System.nanoTime();
        try {
            HttpResponse<InputStream> resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            String worker = resp.headers().firstValue("x-kvprefix-worker").orElse("");
            long routed = Long.parseLong(
                    resp.headers().firstValue("x-kvprefix-cached-blocks").orElse("0"));
            try (BufferedReader in = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
                if (resp.statusCode() != 200) {
                    return failed("HTTP " + resp.statusCode() + ": " + in.readLine());
                }
                return read(in, t0, routed, worker);
            }
        } catch (IOException | RuntimeException e) {
            return failed(e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failed("interrupted");
        }
    }

    private static Outcome read(BufferedReader in, long t0, long routed, String worker) throws IOException {
        long first = -1;
        JsonNode usage = null;
        boolean done = false;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (!line.startsWith("data:")) {
                continue;
            }
            if (first < 0) {
                first = System.nanoTime() - t0;
            }
            String data = line.substring(5).strip();
            if (data.equals("[DONE]")) {
                done = true;
                break;
            }
            if (data.contains("\"error\"")) {
                return failed("the stream ended with " + data);
            }
            if (data.contains("\"usage\"")) {
                JsonNode u = JSON.readTree(data).get("usage");
                usage = u == null || u.isNull() ? usage : u;
            }
        }
        if (!done || usage == null) {
            return failed(done ? "no usage in the stream" : "the stream ended before data: [DONE]");
        }
        long cached = usage.path("prompt_tokens_details").path("cached_tokens").asLong(-1);
        return new Outcome(first, usage.path("prompt_tokens").asLong(), cached, routed, worker, null);
    }

    private static Outcome failed(String why) {
        return new Outcome(-1, 0, 0, 0, "", why);
    }
}
