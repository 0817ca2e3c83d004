package io.kvprefix.service.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.service.Usage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads the usage block out of an engine's response as it passes, without holding the response back:
 * for a server-sent-event stream ({@code text/event-stream}) line by line, parsing only the
 * {@code data:} lines that contain {@code "usage"} (the last non-null usage wins: vLLM's
 * {@code continuous_usage_stats} repeats a growing one in every chunk, {@code include_usage} sends one
 * at the end); for a JSON body, the whole body once it has ended (kept up to {@link #MAX_BODY} bytes).
 * The Responses API's usage, nested under {@code response} in its {@code response.completed} event,
 * is read too.
 *
 * <p>Thread-safety: not thread-safe; one response, fed in order by one thread at a time.
 */
public final class UsageScanner {
    /** The most bytes of a JSON body (or of one event line) kept to read the usage from. */
    public static final int MAX_BODY = 8 << 20;

    private static final byte[] USAGE = "\"usage\"".getBytes(StandardCharsets.US_ASCII);

    private final boolean sse;
    private byte[] buf = new byte[256];
    private int len;
    private boolean overflow;
    private boolean done;
    private Usage usage;

    /** A scanner of an event stream ({@code sse}) or of a JSON body. */
    public UsageScanner(boolean sse) {
        this.sse = sse;
    }

    /** Feeds the next bytes of the response body. */
    public void feed(byte[] b, int off, int n) {
        if (!sse) {
            append(b, off, n);
            return;
        }
        int start = off;
        int end = off + n;
        for (int i = off; i < end; i++) {
            if (b[i] == '\n') {
                append(b, start, i - start);
                line();
                start = i + 1;
            }
        }
        append(b, start, end - start);
    }

    /** The body has ended: reads a JSON body's usage (an unterminated last event line too). */
    public void end() {
        if (sse) {
            if (len > 0) {
                line();
            }
            return;
        }
        if (!overflow && len > 0) {
            usage = parse(buf, 0, len, false);
        }
        len = 0;
    }

    /** The usage read so far, or null. */
    public Usage usage() {
        return usage;
    }

    /** True if an event stream carried its {@code data: [DONE]} line. */
    public boolean sawDone() {
        return done;
    }

    private void append(byte[] b, int off, int n) {
        if (overflow || n == 0) {
            return;
        }
        if (len + n > MAX_BODY) {
            overflow = true;
            len = 0;
            return;
        }
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(len + n, Math.min(MAX_BODY, buf.length * 2)));
        }
        System.arraycopy(b, off, buf, len, n);
        len += n;
    }

    /** One whole event-stream line (without its '\n') is in {@code buf}. */
    private void line() {
        int n = len;
        len = 0;
        if (overflow) {
            overflow = false; // only that line was lost
            return;
        }
        if (n > 0 && buf[n - 1] == '\r') {
            n--;
        }
        if (n < 5 || buf[0] != 'd' || buf[1] != 'a' || buf[2] != 't' || buf[3] != 'a' || buf[4] != ':') {
            return;
        }
        int p = 5;
        while (p < n && buf[p] == ' ') {
            p++;
        }
        if (n - p == 6 && new String(buf, p, 6, StandardCharsets.US_ASCII).equals("[DONE]")) {
            done = true;
            return;
        }
        if (indexOf(buf, p, n, USAGE) >= 0) {
            Usage u = parse(buf, p, n - p, true);
            if (u != null) {
                usage = u;
            }
        }
    }

    private static int indexOf(byte[] hay, int from, int to, byte[] needle) {
        outer:
        for (int i = from; i <= to - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The usage of one JSON object (a chunk or a body), or null if it has none or is not JSON. */
    static Usage parse(byte[] b, int off, int n, boolean chunk) {
        JsonNode root;
        try {
            root = Classifier.JSON.readTree(b, off, n);
        } catch (IOException e) {
            return null;
        }
        if (root == null || !root.isObject()) {
            return null;
        }
        JsonNode u = root.get("usage");
        if ((u == null || !u.isObject()) && chunk) {
            u = root.path("response").get("usage"); // the Responses API's response.completed event
        }
        if (u == null || !u.isObject()) {
            return null;
        }
        long prompt = number(u, "prompt_tokens", "input_tokens");
        long completion = number(u, "completion_tokens", "output_tokens");
        JsonNode details =
                u.has("prompt_tokens_details") ? u.get("prompt_tokens_details") : u.get("input_tokens_details");
        long cached = details != null
                        && details.path("cached_tokens").canConvertToLong()
                        && details.path("cached_tokens").isIntegralNumber()
                ? details.get("cached_tokens").asLong()
                : -1;
        if (prompt < 0) {
            return null;
        }
        return new Usage(prompt, Math.max(0, completion), cached);
    }

    private static long number(JsonNode u, String name, String other) {
        JsonNode v = u.has(name) ? u.get(name) : u.get(other);
        return v != null && v.isIntegralNumber() ? v.asLong() : -1;
    }
}
