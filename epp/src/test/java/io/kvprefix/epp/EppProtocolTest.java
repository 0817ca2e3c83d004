package io.kvprefix.epp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.kvprefix.epp.internal.Wire;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.standin.testing.StandinProcess;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The picker driven as Envoy drives it (docs/EPP.md section 2), over stand-in engines whose real KV
 * events feed its index: bodies whole and cut at every awkward place pick the same engine, the one
 * the router service itself would pick for the same request on the same index, and come back whole in
 * chunks of at most 62,000 bytes after the headers answer; the subset hint, a fallback that served, a
 * headers-only request and a reset stream.
 */
class EppProtocolTest {
    private static StandinProcess engines;
    private static RouterService service;
    private static EppServer epp;
    private static Envoy envoy;
    private static List<EngineSpec> specs;

    @BeforeAll
    static void start() throws Exception {
        engines = StandinProcess.start("--engines", "3", "--time-scale", "0.05");
        specs = engines.specs();
        var o = RouterService.builder().healthInterval(Duration.ofMillis(200)).healthTimeout(Duration.ofSeconds(5));
        specs.forEach(o::engine);
        service = o.build();
        epp = EppServer.start(
                service, EppServer.options().host("127.0.0.1").port(0).healthPort(0));
        envoy = new Envoy(epp.port());
        Picked.await("the engines are up", 60, () -> service.notReady() == null);
        engines.awaitLive(service::scrape); // a test's first request must reach the index
    }

    @AfterAll
    static void stop() throws Exception {
        if (envoy != null) {
            envoy.close();
        }
        if (epp != null) {
            epp.close();
        }
        if (service != null) {
            service.close();
        }
        if (engines != null) {
            engines.close();
        }
    }

    @AfterEach
    void nothingLeftInFlight() throws Exception {
        Picked.await("every request ended", 60, () -> service.stats().inFlight() == 0);
    }

    /** Caches {@code body}'s prompt on engine {@code i} (sent to it directly) and waits for its events. */
    private static void cacheOn(int i, byte[] body) throws Exception {
        Picked.direct(engines.engine(i), body);
        String w = engines.engine(i).worker() + "/0";
        Picked.await("the index has " + w + "'s blocks", 60, () -> Picked.depth(service, body, w) >= 4);
    }

    /** Sends a whole response (headers, one body chunk that ends it) and checks the answers. */
    private static void respond(Envoy.Stream s, String served) throws Exception {
        s.responseHeaders(200, served, false);
        ProcessingResponse h = s.next();
        assertTrue(h.hasResponseHeaders(), "" + h);
        assertTrue(
                h.getResponseHeaders()
                        .getResponse()
                        .getHeaderMutation()
                        .getRemoveHeadersList()
                        .contains(Wire.SERVED),
                "the served header is stripped from the client's response");
        String usage = "{\"usage\":{\"prompt_tokens\":70,\"completion_tokens\":2,\"total_tokens\":72}}";
        s.responseBody(usage, true);
        assertArrayEquals(usage.getBytes(StandardCharsets.UTF_8), s.echoedBody(false));
        s.end();
    }

    @Test
    void everyCutOfTheBodyPicksWhatTheServiceWouldAndEchoesItWhole() throws Exception {
        byte[] body = Picked.completion(30_000, 70);
        cacheOn(1, body);
        String expected = Picked.servicePick(service, specs, body);
        assertEquals(engines.engine(1).endpoint(), expected, "the service itself routes to where the prefix is");
        String text = new String(body, StandardCharsets.UTF_8);
        int euro = text.indexOf('\u20ac');
        int midUtf8 = text.substring(0, euro).getBytes(StandardCharsets.UTF_8).length + 1; // inside the 3-byte euro
        int midKey = bytesBefore(text, text.indexOf("\"prompt\"") + 3); // inside a key
        int midNumber = bytesBefore(text, text.indexOf("30001") + 2); // inside a token id
        int[] oneByte = new int[body.length - 1];
        Arrays.setAll(oneByte, k -> k + 1);
        List<int[]> cuts = List.of(new int[0], new int[] {midUtf8}, new int[] {midKey, midNumber}, oneByte);
        for (int[] cut : cuts) {
            Envoy.Stream s =
                    envoy.open().headers("POST", "/v1/completions", false, null).body(body, cut);
            ProcessingResponse first = s.next();
            assertTrue(first.hasRequestHeaders(), "the headers answer comes first: " + first);
            String dest = Envoy.destination(first);
            assertEquals(dest, Envoy.metadataDestination(first), "header and metadata name the same list");
            assertTrue(first.getRequestHeaders().getResponse().getClearRouteCache());
            List<String> list = List.of(dest.split(","));
            assertEquals(expected, list.get(0), "cut into " + (cut.length + 1) + " pieces");
            assertEquals(3, list.size(), "the choice, then two fallbacks: " + dest);
            assertEquals(3, list.stream().distinct().count(), dest);
            assertArrayEquals(body, s.echoedBody(true), "the body comes back as it went");
            respond(s, list.get(0));
        }
    }

    @Test
    void aLargeBodyGoesBackInChunksOfAtMost62000Bytes() throws Exception {
        byte[] body = Picked.completion(50_000, 30_000);
        assertTrue(body.length > 2 * Wire.MAX_CHUNK, "" + body.length);
        Envoy.Stream s =
                envoy.open().headers("POST", "/v1/completions", false, null).body(body, 1000, 70_000);
        assertTrue(s.next().hasRequestHeaders());
        assertArrayEquals(body, s.echoedBody(true));
        respond(s, null);
    }

    @Test
    void theSubsetHintIsHonoured() throws Exception {
        byte[] body = Picked.completion(31_000, 70);
        cacheOn(1, body);
        List<String> subset =
                List.of(engines.engine(0).endpoint(), engines.engine(2).endpoint());
        Envoy.Stream s =
                envoy.open().headers("POST", "/v1/completions", false, subset).body(body);
        String dest = Envoy.destination(s.next());
        assertTrue(subset.containsAll(List.of(dest.split(","))), "only the subset's endpoints: " + dest);
        assertEquals(2, dest.split(",").length, dest);
        s.echoedBody(true);
        respond(s, dest.split(",")[0]);

        Envoy.Stream none = envoy.open()
                .headers("POST", "/v1/completions", false, List.of("10.9.9.9:8000"))
                .body(body);
        ProcessingResponse r = none.next();
        assertTrue(r.hasImmediateResponse(), "" + r);
        assertEquals(503, r.getImmediateResponse().getStatus().getCodeValue());
        none.end();
    }

    @Test
    void aFallbackThatServedCarriesTheLoad() throws Exception {
        byte[] body = Picked.completion(32_000, 70);
        Envoy.Stream s =
                envoy.open().headers("POST", "/v1/completions", false, null).body(body);
        List<String> list = List.of(Envoy.destination(s.next()).split(","));
        s.echoedBody(true);
        EngineSpec chosen = spec(list.get(0));
        EngineSpec fallback = spec(list.get(1));
        assertEquals(1, Picked.inFlight(service, chosen));
        s.responseHeaders(200, list.get(1), false);
        assertTrue(s.next().hasResponseHeaders());
        assertEquals(0, Picked.inFlight(service, chosen), "the first choice did not serve");
        assertEquals(1, Picked.inFlight(service, fallback), "the fallback that served carries it");
        s.responseBody("{}", true);
        s.echoedBody(false);
        assertEquals(0, Picked.inFlight(service, fallback));
        s.end();
    }

    @Test
    void aHeadersOnlyRequestIsPickedAtItsHeaders() throws Exception {
        Envoy.Stream s = envoy.open().headers("GET", "/v1/models", true, null);
        ProcessingResponse first = s.next();
        String dest = Envoy.destination(first);
        assertTrue(dest != null && specs.stream().anyMatch(e -> dest.startsWith(e.host() + ":" + e.port())), dest);
        s.responseHeaders(200, null, true);
        assertTrue(s.next().hasResponseHeaders());
        s.end();
    }

    @Test
    void aResetStreamReleasesItsLoad() throws Exception {
        byte[] body = Picked.completion(33_000, 70);
        Envoy.Stream s =
                envoy.open().headers("POST", "/v1/completions", false, null).body(body);
        EngineSpec chosen = spec(Envoy.destination(s.next()).split(",")[0]);
        s.echoedBody(true);
        assertEquals(1, Picked.inFlight(service, chosen));
        s.reset();
        Picked.await("the reset request's load is released", 60, () -> Picked.inFlight(service, chosen) == 0);
    }

    @Test
    void requestTrailersEndTheBody() throws Exception {
        byte[] body = Picked.completion(34_000, 40);
        Envoy.Stream s = envoy.open().headers("POST", "/v1/completions", false, null);
        s.out.onNext(io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest.newBuilder()
                .setRequestBody(io.envoyproxy.envoy.service.ext_proc.v3.HttpBody.newBuilder()
                        .setBody(com.google.protobuf.ByteString.copyFrom(body)))
                .build());
        s.requestTrailers();
        assertTrue(s.next().hasRequestHeaders());
        List<ProcessingResponse> rest = new ArrayList<>();
        ProcessingResponse r;
        while (!(r = s.next()).hasRequestTrailers()) {
            rest.add(r);
        }
        assertNotEquals(0, rest.size());
        assertArrayEquals(
                body,
                rest.stream()
                        .map(x -> x.getRequestBody()
                                .getResponse()
                                .getBodyMutation()
                                .getStreamedResponse()
                                .getBody())
                        .reduce(com.google.protobuf.ByteString.EMPTY, com.google.protobuf.ByteString::concat)
                        .toByteArray());
        respond(s, null);
    }

    @Test
    void aBufferedBodyGetsTheDestinationOnItsAnswer() throws Exception {
        byte[] body = Picked.completion(35_000, 70);
        cacheOn(2, body);
        Envoy.Stream s = envoy.open(BodySendMode.BUFFERED).headers("POST", "/v1/completions", false, null);
        ProcessingResponse h = s.next();
        assertTrue(h.hasRequestHeaders(), "buffered: the headers are answered at once: " + h);
        assertEquals(0, h.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersCount());
        s.body(body);
        ProcessingResponse b = s.next();
        assertTrue(b.hasRequestBody(), "" + b);
        String dest = b.getRequestBody()
                .getResponse()
                .getHeaderMutation()
                .getSetHeaders(0)
                .getHeader()
                .getRawValue()
                .toStringUtf8();
        assertEquals(engines.engine(2).endpoint(), dest.split(",")[0]);
        assertEquals(dest, Envoy.metadataDestination(b));
        assertTrue(b.getRequestBody().getResponse().getClearRouteCache());
        s.responseHeaders(200, null, true);
        assertTrue(s.next().hasResponseHeaders());
        s.end();
    }

    private static int bytesBefore(String text, int chars) {
        return text.substring(0, chars).getBytes(StandardCharsets.UTF_8).length;
    }

    private static EngineSpec spec(String endpoint) {
        return specs.stream()
                .filter(e -> (e.host() + ":" + e.port()).equals(endpoint))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no engine at " + endpoint));
    }
}
