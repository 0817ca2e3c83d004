package io.kvprefix.nats.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.kvprefix.nats.internal.Frames;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.MessageInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What every fleet test sets up: a real nats-server, the vLLM-shaped publisher process with its
 * engines, a connection, and replicas (each an index fed by a {@link StreamReplica}); and what they
 * check at the end: the stream holds each engine's batches exactly once and in order, and every
 * replica answers as the oracle fed the engines' full history. {@link #close()} stops everything,
 * the server by its process id, also when the test fails.
 *
 * <p>Thread-safety: not thread-safe; one test drives one fleet.
 */
public final class Fleet implements AutoCloseable {
    public static final String STREAM = "KVPREFIX_TEST";

    private final Path dir;
    public final NatsServer server;
    public final PythonPublisher publisher;
    public final Connection connection;
    public final FleetStream stream;
    private final Map<String, EngineEndpoint> engines = new LinkedHashMap<>();
    private final Map<String, Long> workerIds = new LinkedHashMap<>();
    private final List<Replica> replicas = new ArrayList<>();

    /** One replica: its index and the stream replica feeding it. */
    public record Replica(String name, PrefixIndex index, StreamReplica replica) {}

    /** Starts the server and the publisher ({@code specJson}, see vllm_publisher.py) under {@code dir}. */
    public Fleet(Path dir, String specJson) throws Exception {
        this(dir, specJson, FleetStream.named(STREAM));
    }

    /** As {@link #Fleet(Path, String)}, on {@code stream} (named {@link #STREAM}, its retention the test's). */
    public Fleet(Path dir, String specJson, FleetStream stream) throws Exception {
        this.dir = dir;
        this.stream = stream;
        this.server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
        PythonPublisher pub = null;
        Connection c = null;
        try {
            pub = new PythonPublisher(Files.createDirectories(dir.resolve("engines")), specJson);
            c = FleetConnection.open(server.url(), "test");
        } catch (Exception | AssertionError e) {
            if (pub != null) {
                pub.close();
            }
            server.close();
            throw e;
        }
        this.publisher = pub;
        this.connection = c;
    }

    /** Configures the publisher's engine {@code name} as worker {@code workerId} (with its replay socket). */
    public EngineEndpoint engine(String name, long workerId) {
        PythonPublisher.Ports p = publisher.ports(name);
        EngineEndpoint e = EngineEndpoint.of(p.pubEndpoint(), workerId).withTopic(p.topic());
        if (p.replayEndpoint() != null) {
            e = e.withReplay(p.replayEndpoint());
        }
        engines.put(name, e);
        workerIds.put(name, workerId);
        return e;
    }

    /** The engines configured, in {@code --engine} form. */
    public List<String> engineSpecs() {
        return engines.values().stream().map(EngineEndpoint::toSpec).toList();
    }

    /** Starts a replica with a new, empty index. */
    public Replica startReplica(String name) throws IOException {
        return startReplica(name, b -> b);
    }

    /** Starts a replica with a new, empty index (or the one it restores), its builder configured by {@code how}. */
    public Replica startReplica(String name, java.util.function.UnaryOperator<StreamReplica.Builder> how)
            throws IOException {
        PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
        StreamReplica sr =
                how.apply(StreamReplica.builder(index, connection, stream)).build();
        if (sr.index() != index) {
            index.close(); // restored from a snapshot: the new index is the replica's
        }
        Replica r = new Replica(name, sr.index(), sr);
        replicas.add(r);
        return r;
    }

    /** Stops a replica and drops its index (what a killed replica process leaves: nothing). */
    public void killReplica(Replica r) {
        r.replica().close();
        r.index().close();
        replicas.remove(r);
    }

    /** The engine sequence number of the last batch {@code r} applied for engine {@code name}, -1 if none. */
    public long appliedSeq(Replica r, String name) {
        String endpoint = engines.get(name).endpoint();
        for (ReplicaStats.EngineStats e : r.replica().stats().engines()) {
            if (e.engine().endpoint().equals(endpoint)) {
                return e.lastSeq();
            }
        }
        return -1;
    }

    /** Waits until {@code r} has applied batch {@code seq} of engine {@code name}. */
    public void awaitApplied(Replica r, String name, long seq) throws InterruptedException {
        await(
                () -> appliedSeq(r, name) >= seq,
                () -> r.name() + " stats: " + r.replica().stats().toJson());
    }

    /**
     * Waits until the publisher is done and every replica has applied every engine's last batch and
     * the whole stream.
     */
    public Map<String, Long> awaitConverged() throws Exception {
        Map<String, Long> last = publisher.awaitDone(60);
        for (Replica r : replicas) {
            await(
                    () -> {
                        for (String name : engines.keySet()) {
                            if (appliedSeq(r, name) != last.get(name)) {
                                return false;
                            }
                        }
                        ReplicaStats s = r.replica().stats();
                        return s.appliedSeq() == s.streamLastSeq();
                    },
                    () -> r.name() + " did not catch up with " + last + ": "
                            + r.replica().stats().toJson());
        }
        return last;
    }

    /** Every replica answers as the oracle fed the engines' full history; the stream is clean. */
    public void assertEveryReplicaMatchesTheOracle() throws Exception {
        assertEveryReplicaMatchesTheOracle(true);
    }

    /**
     * Every replica answers as the oracle fed the engines' full history; with {@code wholeStream},
     * the stream still holds every engine's batches once each, in order (not after its retention
     * dropped some).
     */
    public void assertEveryReplicaMatchesTheOracle(boolean wholeStream) throws Exception {
        try (FleetOracle oracle = new FleetOracle(publisher.truth(), workerIds)) {
            for (Replica r : replicas) {
                oracle.assertSame(
                        r.index(), r.name() + " " + r.replica().stats().toJson());
                if (r.replica().stats().bootstrapSeq() < 0) { // a restored replica counts only what came after
                    oracle.assertSameCounts(r.replica().stats(), engines, r.name());
                }
                for (ReplicaStats.EngineStats e : r.replica().stats().engines()) {
                    assertEquals(0, e.clears() + e.gaps(), r.name() + ": no clear, no gap: " + e.subject());
                }
            }
            for (var e : wholeStream
                    ? engines.entrySet()
                    : Map.<String, EngineEndpoint>of().entrySet()) {
                assertEquals(
                        oracle.batches(e.getKey()),
                        batchesInStream(e.getValue()).size(),
                        "engine " + e.getKey() + ": every batch once in the stream");
            }
        }
    }

    /**
     * Reads {@code engine}'s subject back, message by message: asserts that its records are numbered
     * 0, 1, 2, ... with no clear, and that its batches are 0, 1, 2, ... (each once, in order); returns them.
     */
    public List<Long> batchesInStream(EngineEndpoint engine) throws IOException, JetStreamApiException {
        JetStreamManagement jsm = connection.jetStreamManagement();
        long last = jsm.getStreamInfo(STREAM).getStreamState().getLastSequence();
        String subject = stream.subjectOf(engine);
        List<Long> seqs = new ArrayList<>();
        long rec = 0;
        for (long s = 1; s <= last; s++) {
            MessageInfo m = jsm.getMessage(STREAM, s);
            if (!m.getSubject().equals(subject)) {
                continue;
            }
            assertEquals(
                    rec, Long.parseLong(m.getHeaders().getFirst(Frames.FIRST_REC)), "record numbers of " + subject);
            for (Frames.Record r : Frames.records(m.getData())) {
                assertEquals(false, r.isClear(), "a clear in " + subject);
                assertEquals(seqs.size(), r.seq(), "batches of " + subject + " in order, once each");
                seqs.add(r.seq());
                rec++;
            }
        }
        return seqs;
    }

    /** Messages in the stream now, per subject (for failure messages). */
    public Map<String, Long> streamCounts() throws IOException, JetStreamApiException {
        Map<String, Long> out = new TreeMap<>();
        JetStreamManagement jsm = connection.jetStreamManagement();
        long last = jsm.getStreamInfo(STREAM).getStreamState().getLastSequence();
        for (long s = 1; s <= last; s++) {
            out.merge(jsm.getMessage(STREAM, s).getSubject(), 1L, Long::sum);
        }
        return out;
    }

    public Path dir() {
        return dir;
    }

    /** The stream's first and last sequence numbers now (first is last + 1 when it holds nothing). */
    public long[] streamRange() throws IOException, JetStreamApiException {
        var st = connection.jetStreamManagement().getStreamInfo(STREAM).getStreamState();
        return new long[] {st.getFirstSequence(), st.getLastSequence()};
    }

    /** Polls {@code done} every 20 ms for up to 60 s. */
    public static void await(BooleanSupplier done, Supplier<String> what) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out: " + what.get());
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() {
        for (Replica r : List.copyOf(replicas)) {
            killReplica(r);
        }
        try {
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                publisher.close();
            } finally {
                server.close();
            }
        }
    }
}
