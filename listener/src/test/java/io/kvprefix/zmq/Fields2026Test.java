package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.zmq.testing.PythonPublisher;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fields engines added in 2026 (docs/ENGINES.md sections 1.1 and 2), on payloads written by
 * {@code listener/src/test/python/event_structs_2026.py}: vLLM's {@code locality} and the unmerged
 * {@code remaining_copy_counts} (format {@code vllm-copies}), SGLang's {@code cache_salt} beside
 * {@code session_id}.
 */
class Fields2026Test {
    private static final EngineEndpoint VLLM = EngineEndpoint.parse("tcp://127.0.0.1:5557=7");
    private static final EngineEndpoint COPIES = EngineEndpoint.parse("tcp://127.0.0.1:5557=7,format=vllm-copies");
    private static final EngineEndpoint SGLANG = EngineEndpoint.parse("tcp://127.0.0.1:5558=8,format=sglang");

    /** The payload of one case of the script, as Debian's python3-msgpack packs it. */
    private static byte[] payload(String name) throws IOException, InterruptedException {
        PythonPublisher.requirePythonModules();
        Process p = new ProcessBuilder(
                        PythonPublisher.PYTHON,
                        RepoPaths.root()
                                .resolve("listener/src/test/python/event_structs_2026.py")
                                .toString(),
                        name)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("event_structs_2026.py " + name + " failed");
        }
        return out;
    }

    private static List<DecodeIssue> issues(DecodedBatch b) {
        return b.issues().stream().map(DecodedBatch.Issue::issue).toList();
    }

    private static int depth(List<KvEvent> events, Worker w, BlockHasher hasher) {
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            events.forEach(index::apply);
            MatchResult r = new MatchResult();
            index.match(new int[] {1, 2, 3, 4}, 0, 4, hasher, r);
            return r.depthOf(w);
        }
    }

    @Test
    void vllmRemovalRemovesEveryBlockUnlessCopyCountsAreHonoured() throws Exception {
        byte[] p = payload("vllm_copies");
        Worker w = Worker.of(7, 0);
        // format vllm: locality read past, remaining_copy_counts ignored, both blocks removed
        DecodedBatch plain = EngineEventDecoder.forEngine(VLLM).decode(p);
        assertEquals(List.of(), issues(plain));
        assertEquals(2, plain.events().size());
        assertArrayEquals(new long[] {11, 12}, ((KvEvent.Removed) plain.events().get(1)).blockHashes());
        assertEquals(0, depth(plain.events(), w, BlockHasher.of(2)));
        // format vllm-copies: the block a copy of which is left stays
        EngineEventDecoder d = EngineEventDecoder.forEngine(COPIES);
        assertInstanceOf(VllmEventDecoder.class, d);
        DecodedBatch counted = d.decode(p);
        assertEquals(List.of(DecodeIssue.COPY_REMAINS), issues(counted));
        assertArrayEquals(new long[] {12}, ((KvEvent.Removed) counted.events().get(1)).blockHashes());
        assertEquals(1, depth(counted.events(), w, BlockHasher.of(2)));
    }

    @Test
    void badCopyCountsAndLocalitySpoilOnlyTheirEvent() throws Exception {
        byte[] p = payload("vllm_bad_copies");
        DecodedBatch b = EngineEventDecoder.forEngine(COPIES).decode(p);
        assertEquals(List.of(DecodeIssue.BAD_EVENT, DecodeIssue.BAD_EVENT, DecodeIssue.BAD_EVENT), issues(b));
        assertEquals(1, b.events().size(), String.valueOf(b.issues()));
        assertArrayEquals(new long[] {13}, ((KvEvent.Removed) b.events().get(0)).blockHashes());
        // without the flag the counts are not checked against the hashes, but must still be counts
        DecodedBatch plain = EngineEventDecoder.forEngine(VLLM).decode(p);
        assertEquals(List.of(DecodeIssue.BAD_EVENT, DecodeIssue.BAD_EVENT), issues(plain));
        assertEquals(2, plain.events().size());
    }

    @Test
    void trtllmMultimodalKeysAreTheBlocksItems() throws Exception {
        DecodedBatch b = EngineEventDecoder.forEngine(VLLM).decode(payload("trtllm_mm"));
        assertEquals(Worker.of(7, 1), b.worker());
        assertEquals(List.of(DecodeIssue.MULTIMODAL, DecodeIssue.BAD_EVENT), issues(b));
        assertEquals(2, b.events().size());
        var image = (KvEvent.StoredTokens) b.events().get(0);
        var plain = (KvEvent.StoredTokens) b.events().get(1);
        assertArrayEquals(new long[0], image.mmHashes()[0]);
        assertArrayEquals(new long[] {0xababababababababL}, image.mmHashes()[1]);
        assertNull(plain.mmHashes());
        // the image's block hashes differently: the plain store's second block is not the image's
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            index.apply(image);
            MatchResult r = new MatchResult();
            index.match(new int[] {1, 2, 3, 4}, 0, 4, BlockHasher.of(2), r);
            assertEquals(1, r.depthOf(Worker.of(7, 1)));
        }
    }

    @Test
    void sglangSessionIdDoesNotScopeTheBlockButCacheSaltDoes() throws Exception {
        DecodedBatch b = EngineEventDecoder.forEngine(SGLANG).decode(payload("sglang_session"));
        assertEquals(List.of(), issues(b));
        assertEquals(2, b.events().size());
        var salted = (KvEvent.StoredTokens) b.events().get(0);
        var unsalted = (KvEvent.StoredTokens) b.events().get(1);
        assertEquals("tenant-a", salted.cacheNamespace());
        assertNull(unsalted.cacheNamespace());
        Worker w = Worker.of(8, 0);
        assertEquals(
                2,
                depth(
                        List.of(salted),
                        w,
                        BlockHasher.builder()
                                .blockSize(2)
                                .cacheNamespace("tenant-a")
                                .build()));
        assertEquals(0, depth(List.of(salted), w, BlockHasher.of(2)));
        // another session's store of the same tokens is found by any request, whatever its session
        assertEquals(2, depth(List.of(unsalted), w, BlockHasher.of(2)));
    }
}
