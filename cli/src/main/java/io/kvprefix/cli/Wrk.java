package io.kvprefix.cli;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The proxy benchmark's short-request throughput (docs/BENCHMARKS.md section 8): Debian's {@code wrk}
 * posting non-streamed 16-token completions of one token, each with a new first token (so no request
 * is a cache hit and the router routes by load and cache as for any prompt), its Lua script written
 * beside the logs; the figure is wrk's {@code Requests/sec}, refused if any answer was not 2xx or a
 * socket failed.
 *
 * <p>Thread-safety: stateless.
 */
final class Wrk {
    static final Path BINARY = Path.of("/usr/bin/wrk");
    private static final Pattern RATE = Pattern.compile("Requests/sec:\\s+([0-9.]+)");

    private Wrk() {}

    /** The Lua script: a POST of a new prompt per request. */
    static String script(String model) {
        return "local threads = 0\n"
                + "function setup(thread)\n  threads = threads + 1\n  thread:set('base', threads * 100000000)\nend\n"
                + "local n = 0\n"
                + "request = function()\n"
                + "  n = n + 1\n"
                + "  local body = '{\"model\":\"" + model + "\",\"prompt\":[' .. (base + n)"
                + " .. ',1,2,3,4,5,6,7,8,9,10,11,12,13,14,15],\"max_tokens\":1}'\n"
                + "  return wrk.format('POST', '/v1/completions', {['Content-Type'] = 'application/json'}, body)\n"
                + "end\n";
    }

    /** One run against {@code base}: requests per second. */
    static double requestsPerSecond(ProxyBench.Options o, URI base) throws IOException, InterruptedException {
        Path lua = o.dir().resolve("wrk.lua");
        Files.writeString(lua, script(ProxyBench.MODEL), StandardCharsets.UTF_8);
        Path out = o.dir().resolve("wrk.out");
        Process p = new ProcessBuilder(List.of(
                        BINARY.toString(),
                        "-t2",
                        "-c" + o.wrkConnections(),
                        "-d" + o.wrkSeconds() + "s",
                        "-s",
                        lua.toString(),
                        base.toString()))
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        if (!p.waitFor(o.wrkSeconds() + 120L, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("wrk did not end; its output: " + LiveProcess.tail(out));
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        Matcher m = RATE.matcher(text);
        if (p.exitValue() != 0 || !m.find()) {
            throw new IOException("wrk failed: " + text.strip());
        }
        if (text.contains("Non-2xx") || text.contains("Socket errors")) {
            throw new IOException("wrk saw errors from " + base + ": " + text.strip());
        }
        return Double.parseDouble(m.group(1));
    }
}
