package io.kvprefix.server.internal;

import io.vertx.core.MultiMap;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which headers cross the proxy (docs/SERVE.md section 1). The hop-by-hop headers of RFC 9110
 * section 7.6.1 ({@code connection} and every header it names, {@code keep-alive},
 * {@code proxy-connection}, {@code te}, {@code transfer-encoding}, {@code upgrade}, {@code trailer})
 * stay on their hop; {@code host}, {@code content-length} and {@code expect} are set anew by the HTTP
 * client; everything else passes unchanged both ways.
 *
 * <p>Thread-safety: stateless.
 */
final class Headers {
    private static final Set<String> HOP = Set.of(
            "connection",
            "keep-alive",
            "proxy-connection",
            "proxy-authenticate",
            "proxy-authorization",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade");

    private Headers() {}

    /** Copies {@code from} into {@code to}, less the hop-by-hop headers and those in {@code alsoDrop}. */
    static void copy(MultiMap from, MultiMap to, Set<String> alsoDrop) {
        Set<String> named = new TreeSet<>();
        for (String c : from.getAll("connection")) {
            for (String n : c.split(",")) {
                named.add(n.strip().toLowerCase(Locale.ROOT));
            }
        }
        for (var e : from.entries()) {
            String k = e.getKey().toLowerCase(Locale.ROOT);
            if (!HOP.contains(k) && !named.contains(k) && !alsoDrop.contains(k)) {
                to.add(e.getKey(), e.getValue());
            }
        }
    }

    /** What a forwarded request leaves out besides the hop-by-hop headers. */
    static final Set<String> REQUEST_DROP = Set.of("host", "content-length", "expect");

    /** What a returned response leaves out besides the hop-by-hop headers (the length is set from the engine's). */
    static final Set<String> RESPONSE_DROP = Set.of("content-length");
}
