package io.kvprefix.examples;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.RouteExplanation;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.Worker;
import io.kvprefix.metrics.PrefixIndexMetrics;
import io.kvprefix.metrics.RouterMetrics;
import io.kvprefix.metrics.SubscriberMetrics;
import io.kvprefix.zmq.DecodedBatch;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.EngineEventDecoder;
import io.kvprefix.zmq.KvEventSubscriber;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.IntStream;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * A router that embeds kvprefix, through its public API only: it builds an index, feeds it the KV
 * events two vLLM engines would send, routes a request and prints the choice. Each method below is
 * one of the snippets in the README or docs/, which a test holds to this file.
 *
 * <p>Run it against the installed library: {@code ./kvprefix install}, then {@code mvn -q compile
 * exec:exec} in this folder. It exits with status 1 if an answer is not the one expected.
 *
 * <p>Thread-safety: a program entry point, run by one thread.
 */
public final class EmbedRouter {
    private EmbedRouter() {}

    /** A system prompt of 8 blocks of 16 tokens, then 4 blocks of a conversation: what worker 1 cached. */
    static final int[] CACHED = IntStream.range(0, 12 * 16).toArray();

    /** A request that continues that conversation by 2 blocks. */
    static final int[] REQUEST = IntStream.range(0, 14 * 16).toArray();

    public static void main(String[] args) throws Exception {
        theIndex(CACHED, engineHashes(12), REQUEST);
        RoutingDecision d = routing(REQUEST);
        expect(d.worker().equals(Worker.of(1)), "the request goes to worker 1, which holds its prefix: " + d);
        expect(d.overlapBlocks() == 12, "12 blocks of it are cached there: " + d);
        vllmPayload();
        hashing(CACHED);
        subscribing();
        metrics();
        explaining();
        System.out.println("embed-router: all answers as expected");
    }

    /** README "The index, in a few lines": a vLLM-style event in, a match out. */
    static void theIndex(int[] tokens, long[] engineHashes, int[] requestTokens) {
        IndexConfig config =
                IndexConfig.builder().blockSize(16).expectedBlocks(16 * 16_384).build();
        try (PrefixIndex index = PrefixIndex.create(config)) { // off-heap, native if it loads
            Worker w = Worker.of(7);
            index.apply(new KvEvent.StoredTokens(w, OptionalLong.empty(), tokens, 16, engineHashes, null, null));
            MatchResult r = new MatchResult(); // reusable: no allocation per match
            index.match(requestTokens, 0, requestTokens.length, r); // hash and match, one native call
            for (int i = 0; i < r.size(); i++) {
                System.out.println(r.worker(i) + " holds " + r.depth(i) + " blocks of the request");
            }
            expect(r.size() == 1 && r.depth(0) == 12, "worker 7 holds the 12 stored blocks");
        }
    }

    /** README "Routing, in a few lines": the router over an event-fed index picks the worker. */
    static RoutingDecision routing(int[] tokens) {
        PrefixIndex index = PrefixIndex.create(IndexConfig.defaults()); // fed with the engines' KV events
        index.apply(
                new KvEvent.StoredTokens(Worker.of(1), OptionalLong.empty(), CACHED, 16, engineHashes(12), null, null));
        try (Router router = Router.builder()
                .index(index)
                .policy("kvprefix-ttft") // the least estimated time to first token
                .worker(Worker.of(1))
                .worker(Worker.of(2)) // route only among these; add and remove any time, O(1)
                .build()) {
            RoutingDecision d = router.route(tokens); // one hash-and-match call, then the policy
            System.out.println("route to " + d.worker() + ": " + d.overlapBlocks() + " of " + tokens.length / 16
                    + " blocks cached there");
            d.prefillFinished(); // first token out: the router learns the worker's prefill speed
            d.finished(); // request done: decode load released
            return d;
        } finally {
            index.close();
        }
    }

    /**
     * An engine's raw payload through its format's decoder ({@link EngineEventDecoder}), as a router
     * does that receives vLLM's KV-event batches some other way than through {@code kvprefix-zmq}'s
     * subscriber. The payload is vLLM's array encoding of a batch ({@code [ts, [events], dp_rank]},
     * msgspec {@code array_like}, vllm/distributed/kv_events.py), written here by hand.
     */
    static void vllmPayload() throws Exception {
        EngineEndpoint engine = EngineEndpoint.parse("tcp://10.0.0.5:5557=2"); // worker 2; format vllm
        EngineEventDecoder decoder = EngineEventDecoder.forEngine(engine);
        DecodedBatch batch = decoder.decode(blockStoredBatch(CACHED, engineHashes(12)));
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            batch.events().forEach(index::apply);
            MatchResult r = index.match(REQUEST);
            System.out.println("vllm payload: " + batch.events().size() + " event(s), " + r.depthOf(Worker.of(2))
                    + " blocks of the request held by worker 2");
            expect(r.depthOf(Worker.of(2)) == 12 && batch.issues().isEmpty(), "the decoded store holds 12 blocks");
        }
    }

    /** README "Hashing, in a few lines": Dynamo-compatible block hashes. */
    static void hashing(int[] tokens) {
        BlockHasher h = BlockHasher.of(16); // 16-token blocks, seed 1337, native if it loads
        long[] local = h.localHashes(tokens); // one XXH3 per full block (a partial tail is dropped)
        long[] chain = h.chainHashes(local); // position-dependent prefix hashes
        BlockHasher lora =
                BlockHasher.builder().blockSize(16).loraName("adapter-a").build(); // salted seed
        expect(local.length == 12 && chain[0] == local[0], "12 blocks; the first chain hash is the first local one");
        expect(lora.localHashes(tokens)[0] != local[0], "a LoRA name salts the hashes");
    }

    /**
     * docs/LISTENER.md section 7, the listener from Java: a subscriber per router, engines added and
     * removed at run time.
     */
    static void subscribing() throws Exception {
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            try (KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) { // one I/O thread
                sub.addEngine(EngineEndpoint.parse("tcp://127.0.0.1:5557=7,replay=tcp://127.0.0.1:6557"));
                // index.match(...) as usual meanwhile; no engine publishes in this example
                sub.removeEngine("tcp://127.0.0.1:5557"); // the index forgets that engine's blocks
                System.out.println(sub.stats().summary()); // every counter, per engine: sub.stats().toJson()
            }
        }
    }

    /** docs/OPERATING.md section 5, metrics: Micrometer binders for the index, the router and the subscriber. */
    static void metrics() {
        IndexConfig config = IndexConfig.defaults();
        MeterRegistry registry = new SimpleMeterRegistry(); // a Prometheus registry in a deployment
        PrefixIndex index = PrefixIndexMetrics.timed(PrefixIndex.create(config), registry); // match latency histogram
        new PrefixIndexMetrics(index).bindTo(registry);
        try (Router router = Router.builder().index(index).worker(Worker.of(1)).build();
                KvEventSubscriber subscriber = KvEventSubscriber.builder(index).build()) {
            new RouterMetrics(router).bindTo(registry); // decisions per worker, cached blocks per decision, misses
            new SubscriberMetrics(subscriber).bindTo(registry);
            router.route(REQUEST).finished();
            long matches = registry.get(PrefixIndexMetrics.MATCH_TIMER).timer().count();
            System.out.println("metrics: " + registry.getMeters().size() + " meters, " + matches + " timed match(es)");
            expect(matches == 1, "the routed request's match was timed once");
        } finally {
            index.close();
        }
    }

    /**
     * docs/OPERATING.md section 6, why a request missed: {@link Router#explain} per worker, with the
     * lines it prints here (checked): worker 1 holds the first 2 of the request's 4 blocks; worker 2 held 3 and lost the
     * second (a hole); worker 3 holds all 4 but has a hundredth of the capacity; worker 4 holds 3
     * under a LoRA adapter and is not a member of the router.
     */
    static void explaining() {
        int[] tokens = IntStream.range(0, 4 * 16).toArray();
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
                Router router = Router.builder()
                        .index(index)
                        .worker(Worker.of(1))
                        .worker(Worker.of(2))
                        .worker(Worker.of(3), 0.01)
                        .build()) {
            long[] h = engineHashes(4);
            index.apply(new KvEvent.StoredTokens(
                    Worker.of(1),
                    OptionalLong.empty(),
                    Arrays.copyOf(tokens, 32),
                    16,
                    Arrays.copyOf(h, 2),
                    null,
                    null));
            index.apply(new KvEvent.StoredTokens(
                    Worker.of(2),
                    OptionalLong.empty(),
                    Arrays.copyOf(tokens, 48),
                    16,
                    Arrays.copyOf(h, 3),
                    null,
                    null));
            index.apply(new KvEvent.Removed(Worker.of(2), new long[] {h[1]}));
            index.apply(new KvEvent.StoredTokens(Worker.of(3), OptionalLong.empty(), tokens, 16, h, null, null));
            index.apply(new KvEvent.StoredTokens(
                    Worker.of(4),
                    OptionalLong.empty(),
                    Arrays.copyOf(tokens, 48),
                    16,
                    Arrays.copyOf(h, 3),
                    "adapter-a",
                    null));
            RouteExplanation e = router.explain(tokens); // nothing is charged or chosen
            for (RouteExplanation.Candidate c : e.workers())
                System.out.println(c.verdict() + " " + c.stop().describe());
            // PREFERRED 1/0: depth 2, absent at 2
            // CANDIDATE 2/0: depth 1, hole at 1 (holds the request's block at 2)
            // OUTWEIGHED 3/0: depth 4, complete
            // NOT_A_MEMBER 4/0: depth 0, absent at 0; under lora=adapter-a it would match 3
            List<String> printed = e.workers().stream()
                    .map(c -> c.verdict() + " " + c.stop().describe())
                    .toList();
            expect(
                    printed.equals(List.of(
                            "PREFERRED 1/0: depth 2, absent at 2",
                            "CANDIDATE 2/0: depth 1, hole at 1 (holds the request's block at 2)",
                            "OUTWEIGHED 3/0: depth 4, complete",
                            "NOT_A_MEMBER 4/0: depth 0, absent at 0; under lora=adapter-a it would match 3")),
                    "the explanation docs/OPERATING.md shows: " + printed);
        }
    }

    /** One engine hash per block, as an engine names its blocks (any distinct numbers do). */
    static long[] engineHashes(int blocks) {
        return IntStream.range(0, blocks).mapToLong(i -> 0x5157_0000L + i).toArray();
    }

    /** A vLLM batch of one BlockStored event: [ts, [["BlockStored", hashes, parent, tokens, block_size, lora_id, medium]], 0]. */
    static byte[] blockStoredBatch(int[] tokens, long[] hashes) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3).packDouble(1.0).packArrayHeader(1);
            p.packArrayHeader(7).packString("BlockStored").packArrayHeader(hashes.length);
            for (long h : hashes) {
                p.packLong(h);
            }
            p.packNil().packArrayHeader(tokens.length);
            for (int t : tokens) {
                p.packInt(t);
            }
            p.packInt(16).packNil().packString("GPU");
            p.packInt(0); // data_parallel_rank
            return p.toByteArray();
        }
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            System.err.println("embed-router: unexpected answer: " + what);
            System.exit(1);
        }
    }
}
