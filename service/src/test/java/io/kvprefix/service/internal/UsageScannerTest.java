package io.kvprefix.service.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.service.Usage;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The usage block read from responses as they pass: an event stream cut at every byte, CRLF lines,
 * growing usage in every chunk, the Responses API's nesting, a JSON body, and what has no usage.
 */
class UsageScannerTest {
    /** vLLM's completion stream with include_usage: chunks with "usage": null, then a usage-only chunk, then [DONE]. */
    private static final String STREAM =
            "data: {\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"text\":\"a\"}],\"usage\":null}\n\n"
                    + "data: {\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"text\":\"b\",\"finish_reason\":\"length\"}],\"usage\":null}\n\n"
                    + "data: {\"id\":\"cmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"total_tokens\":42,"
                    + "\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\n"
                    + "data: [DONE]\n\n";

    @Test
    void anEventStreamCutAtEveryByteGivesTheSameUsage() {
        byte[] b = STREAM.getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut <= b.length; cut++) {
            for (int cut2 = cut; cut2 <= b.length; cut2 += 7) {
                UsageScanner s = new UsageScanner(true);
                s.feed(b, 0, cut);
                s.feed(b, cut, cut2 - cut);
                s.feed(b, cut2, b.length - cut2);
                s.end();
                assertEquals(new Usage(40, 2, 32), s.usage(), "cut at " + cut + ", " + cut2);
                assertTrue(s.sawDone());
            }
        }
    }

    @Test
    void crlfLinesContinuousUsageAndNoCachedTokens() {
        String s = "data: {\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\r\n\r\n"
                + "data:{\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\r\n\r\n"
                + ": a comment with \"usage\"\r\n\r\n"
                + "data: [DONE]\r\n\r\n";
        UsageScanner u = scan(true, s);
        assertEquals(new Usage(5, 2, -1), u.usage(), "the last usage wins; none cached when not reported");
        assertFalse(u.usage().hasCachedTokens());
        assertTrue(u.sawDone());
        UsageScanner noDone = scan(true, "data: {\"choices\":[]}\n\n");
        assertNull(noDone.usage());
        assertFalse(noDone.sawDone());
    }

    @Test
    void theResponsesApiAndAJsonBody() {
        String responses = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":"
                + "{\"input_tokens\":9,\"output_tokens\":3,\"input_tokens_details\":{\"cached_tokens\":8}}}}\n\n";
        assertEquals(new Usage(9, 3, 8), scan(true, responses).usage());
        String body = "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"usage\"}}],"
                + "\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":96}}}";
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut <= b.length; cut += 5) {
            UsageScanner u = new UsageScanner(false);
            u.feed(b, 0, cut);
            u.feed(b, cut, b.length - cut);
            u.end();
            assertEquals(new Usage(100, 7, 96), u.usage(), "cut at " + cut);
        }
        assertNull(scan(false, "{\"error\":{\"message\":\"x\"}}").usage());
        assertNull(scan(false, "not json").usage());
        assertNull(scan(false, "{\"usage\":{\"completion_tokens\":1}}").usage(), "no prompt count: no usage");
    }

    @Test
    void aBodyOverTheLimitIsNotRead() {
        UsageScanner u = new UsageScanner(false);
        byte[] chunk = new byte[1 << 20];
        java.util.Arrays.fill(chunk, (byte) ' ');
        for (int i = 0; i <= UsageScanner.MAX_BODY / chunk.length; i++) {
            u.feed(chunk, 0, chunk.length);
        }
        byte[] tail = "{\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}".getBytes(StandardCharsets.UTF_8);
        u.feed(tail, 0, tail.length);
        u.end();
        assertNull(u.usage());
    }

    private static UsageScanner scan(boolean sse, String s) {
        UsageScanner u = new UsageScanner(sse);
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        u.feed(b, 0, b.length);
        u.end();
        return u;
    }
}
