package io.kvprefix.cli;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.IndexImages;
import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix fleet-bench}: measures the fleet (docs/FLEET.md) on this machine with
 * real processes: a nats-server (JetStream, file storage in a temporary folder, a free loopback
 * port), the vLLM-shaped publisher of the listener's tests as the engines
 * ({@code listener/src/test/python/vllm_publisher.py}, which needs Debian's python3-zmq and
 * python3-msgpack), and a relay and replicas in this JVM. Three figures (benchmarks/RESULTS.md
 * has them): end-to-end lag from engine publish to replica apply at a paced engine rate; events per
 * second through relay, JetStream and replica with the engines publishing as fast as the stand-in
 * can; and the time a new replica takes to hold the whole stream of that run, applying it from its
 * start or restoring the first replica's last snapshot (docs/FLEET.md section 5; checked: the
 * restored index has the blocks and event counters of the one that applied the stream).
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "fleet-bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measure the JetStream fleet (relay, replicas, a real nats-server) on this machine.",
            "It runs a real nats-server (file storage, loopback), the vLLM-shaped publisher as",
            "engines, a relay and replicas. Prints one JSON line: paced lag p50/p99, events/s at",
            "full rate, bootstrap time from the stream and from a snapshot."
        })
final class FleetBenchCommand implements Callable<Integer> {
    private static final int BURST = 900;
    /** Live batches after a burst's backlog: the first one seen makes the relay ask for everything from 0. */
    private static final int LIVE_AFTER_BURST = 10;

    private static final String SCRIPT = "listener/src/test/python/vllm_publisher.py";
    private static final Pattern ENGINE = Pattern.compile("\"([^\"]+)\": \\{\"pub\": (\\d+), \"replay\": (\\d+)");

    @Option(
            names = "--engines",
            paramLabel = "N",
            defaultValue = "4",
            description = "engines (default: ${DEFAULT-VALUE})")
    int engines;

    @Option(
            names = "--paced-batches",
            paramLabel = "N",
            defaultValue = "2000",
            description = "batches per engine of the paced run, one step every 2 ms (default: ${DEFAULT-VALUE})")
    int pacedBatches;

    @Option(
            names = "--batches",
            paramLabel = "N",
            defaultValue = "5000",
            description = "batches per engine of the full-rate run (default: ${DEFAULT-VALUE})")
    int batches;

    @Option(
            names = "--burst-engines",
            paramLabel = "N",
            defaultValue = "16",
            description = {
                "engines of the burst run, each with 900 batches published before the relay",
                "subscribes, so the relay's start-up replay fetches them at socket speed (900",
                "stays under the replay socket's send high-water mark of 1,000; default: ${DEFAULT-VALUE})"
            })
    int burstEngines;

    @Option(
            names = "--nats-server",
            paramLabel = "PATH",
            description = "the nats-server executable (default: /usr/sbin/nats-server, else PATH)")
    String natsServer;

    @Override
    public Integer call() throws Exception {
        if (engines < 1 || pacedBatches < 1 || batches < 1) {
            throw new IllegalArgumentException("--engines, --paced-batches and --batches must be at least 1");
        }
        if (natsServer != null
                && !Files.isExecutable(Check.inputFile("--nats-server", Check.path("--nats-server", natsServer)))) {
            throw new IllegalArgumentException("--nats-server '" + natsServer + "': not executable");
        }
        Path script = repoRoot().resolve(SCRIPT);
        Path dir = Files.createTempDirectory("kvprefix-fleet-bench");
        PrintStream err = System.err;
        Process server = startServer(dir);
        int port = serverPort;
        String url = "nats://127.0.0.1:" + port;
        Connection c = FleetConnection.open(url, "kvprefix-fleet-bench");
        try {
            err.println("kvprefix fleet-bench: nats-server on " + url + ", store " + dir);
            Phase paced = run(c, script, dir, "PACED", engines, pacedBatches, 2, false, false);
            err.println("kvprefix fleet-bench: paced: " + paced.replica.summary());
            Phase full = run(c, script, dir, "FULL", engines, batches, 0, false, true);
            err.println("kvprefix fleet-bench: full rate: " + full.replica.summary());
            err.printf(
                    Locale.ROOT,
                    "kvprefix fleet-bench: bootstrap: %.3f s from the stream's start, %.3f s from a snapshot%n",
                    full.bootstrapSeconds,
                    full.fromSnapshot.seconds());
            Phase burst = run(c, script, dir, "BURST", burstEngines, BURST, 0, true, false);
            err.println("kvprefix fleet-bench: burst: " + burst.replica.summary());
            String json = json(paced, full, burst);
            System.out.println(json);
            return 0;
        } finally {
            c.close();
            server.toHandle().destroy();
            server.waitFor(10, TimeUnit.SECONDS);
            deleteTree(dir);
        }
    }

    /** The one JSON line: the paced, full-rate and burst runs and the two bootstraps. */
    private String json(Phase paced, Phase full, Phase burst) {
        String runs = String.format(
                Locale.ROOT,
                "{\"engines\":%d,\"paced\":{\"batches\":%d,\"events\":%d,\"seconds\":%.3f,\"events_per_s\":%.0f,"
                        + "\"lag_ms_p50\":%.3f,\"lag_ms_p99\":%.3f,\"lag_ms_max\":%.3f},"
                        + "\"full\":{\"batches\":%d,\"events\":%d,\"stream_messages\":%d,\"seconds\":%.3f,"
                        + "\"events_per_s\":%.0f,\"batches_per_s\":%.0f,\"stream_bytes\":%d,\"lag_ms_p50\":%.3f,"
                        + "\"lag_ms_p99\":%.3f},",
                engines,
                paced.replica.batches(),
                paced.replica.events(),
                paced.seconds,
                paced.replica.events() / paced.seconds,
                paced.replica.lagP50Micros() / 1000.0,
                paced.replica.lagP99Micros() / 1000.0,
                paced.replica.lagMaxMicros() / 1000.0,
                full.replica.batches(),
                full.replica.events(),
                full.replica.messages(),
                full.seconds,
                full.replica.events() / full.seconds,
                full.replica.batches() / full.seconds,
                full.bytes,
                full.replica.lagP50Micros() / 1000.0,
                full.replica.lagP99Micros() / 1000.0);
        return runs
                + String.format(
                        Locale.ROOT,
                        "\"burst\":{\"engines\":%d,\"batches\":%d,\"events\":%d,\"stream_messages\":%d,"
                                + "\"seconds\":%.3f,\"events_per_s\":%.0f,\"batches_per_s\":%.0f,\"stream_mb_per_s\":%.2f},"
                                + "\"bootstrap_from_stream_start\":{\"messages\":%d,\"events\":%d,\"seconds\":%.3f,"
                                + "\"events_per_s\":%.0f,\"stream_mb_per_s\":%.2f},"
                                + "\"bootstrap_from_snapshot\":{\"seconds\":%.3f,\"restore_ms\":%d,"
                                + "\"messages_after\":%d}}",
                        burstEngines,
                        burst.replica.batches(),
                        burst.replica.events(),
                        burst.replica.messages(),
                        burst.seconds,
                        burst.replica.events() / burst.seconds,
                        burst.replica.batches() / burst.seconds,
                        burst.bytes / 1e6 / burst.seconds,
                        full.bootstrap.messages(),
                        full.bootstrap.events(),
                        full.bootstrapSeconds,
                        full.bootstrap.events() / full.bootstrapSeconds,
                        full.bytes / 1e6 / full.bootstrapSeconds,
                        full.fromSnapshot.seconds(),
                        full.fromSnapshot.restoreMillis(),
                        full.fromSnapshot.messagesAfter());
    }

    private record Phase(
            ReplicaStats replica,
            double seconds,
            long bytes,
            ReplicaStats bootstrap,
            double bootstrapSeconds,
            Booted fromSnapshot) {}

    /** A replica started from the newest snapshot: until it had applied the stream's last message, and the restore's share. */
    private record Booted(double seconds, long restoreMillis, long messagesAfter) {}

    /**
     * Times a replica that starts from the newest snapshot in {@code stream}'s bucket until it holds
     * stream sequence {@code last}, and checks that it holds what {@code fromStart} (a replica that
     * applied the whole stream) holds: the same blocks and event counters.
     */
    private static Booted fromSnapshot(Connection c, FleetStream stream, long last, PrefixIndex fromStart)
            throws Exception {
        try (PrefixIndex unused = PrefixIndex.create(IndexConfig.defaults())) {
            long t0 = System.nanoTime();
            StreamReplica r3 = StreamReplica.builder(unused, c, stream)
                    .snapshots(IndexImages.of(IndexConfig.defaults()), Duration.ofHours(1))
                    .build();
            try (PrefixIndex restored = r3.index() == unused ? null : r3.index()) {
                await(() -> r3.appliedSequence() >= last, 120, () -> r3.stats().toJson());
                double seconds = (System.nanoTime() - t0) / 1e9;
                ReplicaStats st = r3.stats();
                if (restored == null || st.bootstrapSeq() < 0) {
                    throw new IllegalStateException("the third replica did not start from a snapshot: " + st.toJson());
                }
                for (EventStatus e : EventStatus.values()) {
                    if (restored.eventCount(e) != fromStart.eventCount(e)
                            || restored.stats().blocks() != fromStart.stats().blocks()) {
                        throw new IllegalStateException("the replica restored from the snapshot differs from the one "
                                + "that applied the whole stream (" + e.wireName() + "): " + st.toJson());
                    }
                }
                return new Booted(seconds, st.bootstrapMillis(), st.messages());
            } finally {
                r3.close();
            }
        }
    }

    /**
     * One run on a stream of its own: the publisher's engines, a replica, then the relay; timed from
     * the relay's start until the replica has applied every engine's last batch. With
     * {@code bootstrap}, a second replica then applies the whole stream from its start, timed.
     */
    private Phase run(
            Connection c,
            Path script,
            Path dir,
            String name,
            int engines,
            int perEngine,
            int stepMs,
            boolean early,
            boolean bootstrap)
            throws Exception {
        FleetStream stream = FleetStream.named("KVPREFIX_BENCH_" + name);
        Path specFile = writeSpec(dir, name, engines, perEngine, stepMs, early);
        Process pub = new ProcessBuilder(
                        "/usr/bin/python3",
                        script.toString(),
                        specFile.toString(),
                        dir.resolve(name + ".truth").toString())
                .redirectError(dir.resolve(name + ".publisher.err").toFile())
                .start();
        try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(pub.getInputStream(), StandardCharsets.UTF_8));
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            String ready = out.readLine();
            if (ready == null || !ready.startsWith("READY ")) {
                throw new IllegalStateException("the publisher did not start (needs /usr/bin/python3 with python3-zmq "
                        + "and python3-msgpack): " + Files.readString(dir.resolve(name + ".publisher.err")));
            }
            List<EngineEndpoint> eps = endpoints(ready);
            Phase relayed = relayed(c, stream, index, eps, engines, perEngine, early, bootstrap);
            ReplicaStats s = relayed.replica;
            double seconds = relayed.seconds;
            Phase boot = bootstrap ? bootstrap(c, stream, s.streamLastSeq()) : null;
            long bytes = c.jetStreamManagement()
                    .getStreamInfo(stream.name())
                    .getStreamState()
                    .getByteCount();
            return boot == null
                    ? new Phase(s, seconds, bytes, null, 0, null)
                    : new Phase(s, seconds, bytes, boot.bootstrap, boot.bootstrapSeconds, boot.fromSnapshot);
        } finally {
            pub.getOutputStream().close();
            if (!pub.waitFor(10, TimeUnit.SECONDS)) {
                pub.destroyForcibly();
            }
        }
    }

    /**
     * A replica of {@code index}, then the relay of {@code eps}: timed from the relay's start (with
     * {@code early}, from the first batch applied) until the replica has applied every engine's last
     * batch. The replica's stats and the seconds, in a phase's first fields.
     */
    private static Phase relayed(
            Connection c,
            FleetStream stream,
            PrefixIndex index,
            List<EngineEndpoint> eps,
            int engines,
            int perEngine,
            boolean early,
            boolean bootstrap)
            throws Exception {
        StreamReplica.Builder rb = StreamReplica.builder(index, c, stream);
        if (bootstrap) { // its last snapshot, published as it closes, is what a third replica starts from
            rb.snapshots(IndexImages.of(IndexConfig.defaults()), Duration.ofHours(1));
        }
        StreamReplica replica = rb.build();
        long t0;
        ReplicaStats s;
        try (EventRelay relay = EventRelay.builder(c, stream).build()) {
            t0 = System.nanoTime();
            for (EngineEndpoint e : eps) {
                relay.addEngine(e);
            }
            long want = (long) (perEngine + (early ? LIVE_AFTER_BURST : 0)) * engines;
            if (early) { // timed from the first batch applied: the publisher generates its backlog first
                await(
                        () -> replica.stats().batches() > 0,
                        120,
                        () -> relay.stats().toJson());
                t0 = System.nanoTime();
            }
            await(
                    () -> replica.stats().batches() >= want && caughtUp(replica),
                    120,
                    () -> relay.stats().toJson() + " " + replica.stats().toJson());
            s = replica.stats();
        } finally {
            replica.close();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        return new Phase(s, seconds, 0, null, 0, null);
    }

    /** The publisher's spec of a run: {@code engines} engines of {@code perEngine} batches each. */
    private static Path writeSpec(Path dir, String name, int engines, int perEngine, int stepMs, boolean early)
            throws IOException {
        StringBuilder spec = new StringBuilder("{\"seed\": 7, \"interval\": " + stepMs / 1000.0 + ", \"engines\": [");
        for (int i = 0; i < engines; i++) {
            spec.append(i > 0 ? "," : "")
                    .append("{\"name\": \"e")
                    .append(i)
                    .append("\", \"encoding\": \"array\", \"replay\": \"plain\", \"ranks\": [0], \"batches\": ")
                    .append(perEngine + (early ? LIVE_AFTER_BURST : 0))
                    .append(early ? ", \"early\": " + perEngine : "")
                    .append(", \"buffer\": ")
                    .append(perEngine + 1)
                    .append('}');
        }
        spec.append("]}");
        Path specFile = dir.resolve(name + ".json");
        Files.writeString(specFile, spec);
        return specFile;
    }

    /** The engines of the publisher's READY line, workers 1, 2, ... */
    private static List<EngineEndpoint> endpoints(String ready) {
        List<EngineEndpoint> eps = new ArrayList<>();
        Matcher m = ENGINE.matcher(ready);
        for (long w = 1; m.find(); w++) {
            eps.add(EngineEndpoint.parse(
                    "tcp://127.0.0.1:" + m.group(2) + "=" + w + "/0,replay=tcp://127.0.0.1:" + m.group(3)));
        }
        return eps;
    }

    /**
     * A second replica applies the whole stream from its start, timed until it holds {@code last}; then a
     * third starts from the newest snapshot ({@link #fromSnapshot}). Returned in a phase's bootstrap fields.
     */
    private static Phase bootstrap(Connection c, FleetStream stream, long last) throws Exception {
        try (PrefixIndex second = PrefixIndex.create(IndexConfig.defaults())) {
            long t1 = System.nanoTime();
            StreamReplica r2 = StreamReplica.builder(second, c, stream).build();
            try {
                await(() -> r2.appliedSequence() >= last, 120, () -> r2.stats().toJson());
                double bootSeconds = (System.nanoTime() - t1) / 1e9;
                ReplicaStats boot = r2.stats();
                return new Phase(null, 0, 0, boot, bootSeconds, fromSnapshot(c, stream, last, second));
            } finally {
                r2.close();
            }
        }
    }

    private static boolean caughtUp(StreamReplica r) {
        ReplicaStats s = r.stats();
        return s.appliedSeq() == s.streamLastSeq();
    }

    private static void await(BooleanSupplier done, int seconds, java.util.function.Supplier<String> state)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the fleet did not finish within " + seconds + " s: " + state.get());
            }
            Thread.sleep(5);
        }
    }

    private int serverPort;

    private Process startServer(Path dir) throws IOException, InterruptedException {
        String exe = natsServer != null ? natsServer : findServer();
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            serverPort = s.getLocalPort();
        }
        Path log = dir.resolve("nats-server.log");
        Process p = new ProcessBuilder(
                        exe, "-js", "-sd", dir.resolve("js").toString(), "-a", "127.0.0.1", "-p", "" + serverPort)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains("Server is ready")) {
                return p;
            }
            if (!p.isAlive()) {
                throw new IllegalStateException("nats-server exited: " + Files.readString(log));
            }
            Thread.sleep(20);
        }
        p.destroyForcibly();
        throw new IllegalStateException("nats-server did not get ready within 20 s");
    }

    private static String findServer() {
        for (String c : List.of("/usr/sbin/nats-server", "/usr/bin/nats-server")) {
            if (Files.isExecutable(Path.of(c))) {
                return c;
            }
        }
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, "nats-server"))) {
                return Path.of(d, "nats-server").toString();
            }
        }
        throw new IllegalArgumentException(
                "no nats-server found: apt-get install -y nats-server (./kvprefix setup does), or give --nats-server");
    }

    /** The repository this command runs from: the first parent of its class files that holds the publisher script. */
    private static Path repoRoot() throws Exception {
        Path p = Path.of(FleetBenchCommand.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toAbsolutePath();
        for (Path d = p; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve(SCRIPT))) {
                return d;
            }
        }
        throw new IllegalArgumentException(
                "fleet-bench runs from a checkout of the repository (it needs " + SCRIPT + ")");
    }

    private static void deleteTree(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            System.err.println("kvprefix fleet-bench: could not remove " + dir + ": " + e.getMessage());
        }
    }
}
