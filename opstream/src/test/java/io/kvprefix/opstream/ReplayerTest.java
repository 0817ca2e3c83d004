package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** {@link Replayer} driven directly: counts, and prompt answers to an interactive producer. */
class ReplayerTest {

    @Test
    void summaryCountsEveryLine() throws Exception {
        String in = """
                {"op":"stored","worker":1,"blocks":[{"block_hash":101,"tokens_hash":11}]}
                {"op":"stored","worker":1,"parent_hash":9,"blocks":[]}
                {"op":"match","local_hashes":[11]}
                {"op":"removed","worker":1,"block_hashes":[5]}
                nonsense
                """;
        try (PrefixIndex index = PrefixIndex.heap(IndexConfig.defaults())) {
            List<String> notes = new ArrayList<>();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Replayer.Summary s = new Replayer(index)
                    .log(notes::add)
                    .run(new ByteArrayInputStream(in.getBytes(StandardCharsets.UTF_8)), out);
            assertEquals(5, s.lines());
            assertEquals(1, s.matches());
            assertEquals(1, s.count(EventStatus.OK));
            assertEquals(1, s.count(EventStatus.PARENT_BLOCK_NOT_FOUND));
            assertEquals(1, s.count(EventStatus.BLOCK_NOT_FOUND));
            assertEquals(1, s.count(EventStatus.INVALID_INPUT));
            assertEquals(1, notes.size());
            assertEquals("line 5: invalid_input: column 1: expected a JSON object '{', found 'n'", notes.get(0));
            assertEquals("""
                    {"status":"ok"}
                    {"status":"parent_block_not_found"}
                    {"scores":[[1,0,1]]}
                    {"status":"block_not_found"}
                    {"status":"invalid_input"}
                    """, out.toString(StandardCharsets.UTF_8));
        }
    }

    /** Each answer is flushed before the replayer waits for more input: a live producer is answered line by line. */
    @Test
    void answersReachAnInteractiveConsumerWithoutWaitingForMoreInput() throws Exception {
        try (PrefixIndex index = PrefixIndex.heap(IndexConfig.defaults())) {
            PipedOutputStream feed = new PipedOutputStream();
            PipedInputStream in = new PipedInputStream(feed, 1 << 16);
            PipedInputStream answers = new PipedInputStream(1 << 16);
            PipedOutputStream out = new PipedOutputStream(answers);
            CompletableFuture<Replayer.Summary> run = CompletableFuture.supplyAsync(() -> {
                try (out) {
                    return new Replayer(index).run(in, out);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            BufferedReader reader = new BufferedReader(new InputStreamReader(answers, StandardCharsets.UTF_8));
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                feed.write("{\"op\":\"stored\",\"worker\":1,\"blocks\":[{\"block_hash\":1,\"tokens_hash\":2}]}\n"
                        .getBytes(StandardCharsets.UTF_8));
                feed.flush();
                assertEquals("{\"status\":\"ok\"}", reader.readLine());
                feed.write("{\"op\":\"match\",\"local_hashes\":[2]}\n".getBytes(StandardCharsets.UTF_8));
                feed.flush();
                assertEquals("{\"scores\":[[1,0,1]]}", reader.readLine());
                feed.close();
                assertEquals(null, reader.readLine());
                assertEquals(2, run.join().lines());
            });
        }
    }
}
