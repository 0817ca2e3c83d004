package io.kvprefix.cli;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.SnapshotException;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamReader;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.zmq.EngineDiscovery;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.EnginesFile;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.SubscriberStats;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix listen}: subscribes to real engines' KV events (vLLM / SGLang over ZMQ) and applies
 * them to an index until {@code --duration} or Ctrl-C / SIGTERM ({@link Lifecycle}), then answers the
 * match lines of {@code --queries} and prints one JSON stats object as the last line. Snapshots:
 * docs/SNAPSHOT.md; metrics and health: docs/METRICS.md section 2 ({@link ListenMetrics}); with
 * {@code --nats}, the fleet replica ({@link NatsListen}); with {@code --dynamo}, a Dynamo
 * deployment's events ({@link DynamoListen}).
 *
 * <p>Exit status: 0 after a run (whatever the engines sent); 2 for a usage error (a bad option value,
 * a queries file that cannot be opened, a metrics port that cannot be bound); 1 if reading the queries
 * file fails on the way or the final snapshot cannot be written.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "listen",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Subscribe to engines' KV events (vLLM / SGLang, ZMQ + msgpack) and feed an index.",
            "An engine with a replay socket is asked at once for what it holds, and again on",
            "every gap and reconnection (in as many requests as a long replay takes); a",
            "restarted engine is found and fetched anew. Only a range the engine no longer",
            "has clears its workers, which are then fed from the live stream (docs/LISTENER.md",
            "section 3). After --duration (or Ctrl-C) prints the result of each match and",
            "explain line of --queries, then one JSON stats object as the last line of",
            "standard output. --metrics-port serves Prometheus metrics and health checks meanwhile.",
            "With --nats it applies a fleet's stream instead (kvprefix relay fills it); with",
            "--dynamo, the KV events of a running NVIDIA Dynamo deployment."
        })
final class ListenCommand implements Callable<Integer> {

    @Option(
            names = "--engine",
            paramLabel = "ENDPOINT=WORKER[/RANK][,replay=ENDPOINT][,topic=T][,format=F]",
            description = {
                "an engine's KV-event publisher, for example",
                "tcp://10.0.0.5:5557=7,replay=tcp://10.0.0.5:6557 (repeatable).",
                "ENDPOINT is tcp://HOST:PORT, ipc://PATH or inproc://NAME; WORKER the worker id.",
                "/RANK fixes the dp rank; without it each batch's data_parallel_rank is used.",
                "replay=ENDPOINT is the engine's replay socket, asked for batches lost in a gap.",
                "snapshot=ENDPOINT (instead of replay=) is its snapshot endpoint of the unmerged",
                "vLLM PR #57789, provisional: the whole cache at start and after a restart or gap",
                "(docs/LISTENER.md section 8).",
                "topic=T subscribes to topics starting with T (default: every topic).",
                "format=F is the format of the batch payloads: vllm (the default), sglang, or vllm-copies:",
                "vllm honouring the unmerged remaining_copy_counts of vLLM #48933 (docs/ENGINES.md section 1.1)."
            })
    List<String> engines = new ArrayList<>();

    @Option(
            names = "--engine-url",
            paramLabel = "http://HOST:PORT=WORKER[,format=F]",
            description = {
                "an engine found, not listed (repeatable): asks the vLLM server at the URL",
                "(GET /kv_event_sources) where each of its dp ranks publishes, and subscribes",
                "to those publishers and replay sockets for worker WORKER"
            })
    List<String> engineUrls = new ArrayList<>();

    @Option(
            names = "--engines-file",
            paramLabel = "FILE",
            description = {
                "a file of engines, one a line (an --engine or --engine-url value; # comments),",
                "read again every second: added, changed and removed lines take effect without",
                "a restart, and a removed engine's blocks are cleared"
            })
    Path enginesFile;

    @Option(
            names = "--trtllm-events",
            paramLabel = "FILE|-=WORKER[/RANK][,block_size=N]",
            description = {
                "TensorRT-LLM KV-cache events, one JSON line each (json.dumps of what",
                "get_kv_cache_events() returns), read from FILE or standard input (-) to its",
                "end and applied for worker WORKER (its own id, not an --engine's); block_size=N",
                "is the engine's tokens_per_block (default: learned from the stored blocks).",
                "Its counters are printed as one JSON line before the stats object."
            })
    String trtllmEvents;

    @Option(
            names = "--nats",
            paramLabel = "URL",
            description = {
                "instead of engines, apply a fleet's JetStream stream (kvprefix relay fills it;",
                "docs/FLEET.md), for example nats://127.0.0.1:4222; the stats then",
                "add the stream sequence applied and the lag"
            })
    String nats;

    @Option(
            names = "--stream",
            paramLabel = "NAME",
            description = {
                "with --nats: the stream's name (default: KVPREFIX_EVENTS); with --dynamo-mode",
                "durable: Dynamo's stream, for releases that name it otherwise than",
                "namespace-NS-component-C-kv-events"
            })
    String stream;

    @Option(
            names = "--dynamo",
            paramLabel = "URL",
            description = {
                "instead of engines, read a running NVIDIA Dynamo deployment's KV events from",
                "its NATS server, for example nats://10.0.0.2:4222, read-only (with --namespace",
                "and --component; docs/OPERATING.md section 10)"
            })
    String dynamo;

    @Option(
            names = "--namespace",
            paramLabel = "NS",
            description = "with --dynamo: the Dynamo namespace (for example dynamo)")
    String namespace;

    @Option(
            names = "--component",
            paramLabel = "C",
            description = "with --dynamo: the workers' component (for example backend)")
    String component;

    @Option(
            names = "--dynamo-mode",
            paramLabel = "MODE",
            defaultValue = "event-plane",
            description = {
                "with --dynamo: event-plane (the default: core NATS subjects, live from now on)",
                "or durable (the JetStream stream of --router-durable-kv-events, from its start)"
            })
    String dynamoMode;

    @Option(
            names = "--queries",
            paramLabel = "FILE",
            description =
                    "op-stream file (docs/SPEC.md section 5) whose match lines are run against the index at the end")
    String queries;

    @Option(
            names = "--stats-interval",
            paramLabel = "SECONDS",
            defaultValue = "5",
            description = "seconds between stats lines on standard error (default: ${DEFAULT-VALUE})")
    double statsInterval;

    @Option(
            names = "--replay-timeout",
            paramLabel = "SECONDS",
            defaultValue = "3",
            description = {
                "a replay request with no answer for this long is asked again (with a backoff;",
                "4 in a row that deliver nothing give the range up); default: ${DEFAULT-VALUE}"
            })
    double replayTimeout;

    @Mixin
    IndexOptions indexOptions = new IndexOptions();

    @Option(
            names = "--snapshot",
            paramLabel = "FILE",
            description = {
                "restart without loss (docs/SNAPSHOT.md): at start, restore the index from FILE if it",
                "exists and ask each engine's replay socket only for the batches after the last one",
                "applied; save FILE every --snapshot-interval and at a clean end (--duration, Ctrl-C,",
                "SIGTERM). A FILE that cannot be restored is reported, renamed to FILE.refused-TIME",
                "(never overwritten) and the index starts empty."
            })
    Path snapshot;

    @Option(
            names = "--snapshot-interval",
            paramLabel = "SECONDS",
            description = {
                "seconds between saves of --snapshot (default: 60); with --nats, publish the replica's",
                "snapshot to the stream's object store every SECONDS and start from the newest one",
                "there (docs/FLEET.md section 5)"
            })
    Double snapshotInterval;

    @Option(
            names = "--memory-budget",
            paramLabel = "BYTES",
            description = {
                "most off-heap memory the index may hold, e.g. 512m or 2g (default: unlimited);",
                "stores past it answer capacity_exceeded and apply nothing (counted per engine)"
            })
    String memoryBudget;

    @Mixin
    WatchFlags watch = new WatchFlags();

    /** What {@code listen} was asked for, checked. */
    private record Plan(
            List<EngineEndpoint> specs,
            Duration runFor,
            Duration every,
            Duration replayWait,
            IndexConfig config,
            Duration saveEvery,
            Path queryFile) {}

    @Override
    public Integer call() throws Exception {
        if (dynamo != null) {
            return DynamoListen.run(this);
        }
        if (namespace != null || component != null || !dynamoMode.equals("event-plane")) {
            throw new IllegalArgumentException("--namespace, --component and --dynamo-mode go with --dynamo URL");
        }
        if (nats != null) {
            return NatsListen.run(this);
        }
        Plan plan = validate();
        try (Lifecycle life =
                Lifecycle.start("listen", Duration.ofSeconds(snapshot == null ? 15 : 120), watch.run.quiet)) {
            ListenMetrics m = life.metrics(watch.host.metricsHost, watch.run.metricsPort);
            if (m != null && snapshot != null) {
                m.watchSnapshots();
            }
            try (PrefixIndex index = instrument(m, openIndex(plan.config(), life))) {
                return listen(plan, index, m, life);
            }
        }
    }

    private Plan validate() {
        List<EngineEndpoint> specs = Check.engines(engines);
        engineUrls.forEach(u -> {
            try {
                EngineDiscovery.Spec.parse(u);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--engine-url: " + e.getMessage(), e);
            }
        });
        Check.inputFileOrNull("--engines-file", enginesFile == null ? null : enginesFile.toString());
        if (specs.isEmpty() && trtllmEvents == null && engineUrls.isEmpty() && enginesFile == null) {
            throw new IllegalArgumentException("give at least one --engine or --trtllm-events, or --nats");
        }
        Duration runFor = watch.run.runFor();
        Duration every = Check.seconds("--stats-interval", statsInterval);
        Duration replayWait = Check.seconds("--replay-timeout", replayTimeout);
        IndexConfig config = indexConfig();
        if (snapshotInterval != null && snapshot == null) {
            throw new IllegalArgumentException("--snapshot-interval needs --snapshot");
        }
        if (snapshot != null) {
            Check.outputFile("--snapshot", snapshot); // a folder or an unwritable place is said now, not at the end
        }
        Duration saveEvery = snapshot == null
                ? null
                : Check.seconds("--snapshot-interval", snapshotInterval == null ? 60 : snapshotInterval);
        return new Plan(
                specs, runFor, every, replayWait, config, saveEvery, Check.inputFileOrNull("--queries", queries));
    }

    /** Subscribes to the listed and the found engines; the watched engines file, or null. */
    private EnginesFile subscribe(KvEventSubscriber sub, Plan plan) throws IOException {
        for (EngineEndpoint e : plan.specs()) {
            sub.addEngine(e);
        }
        for (String u : engineUrls) {
            for (EngineEndpoint e : EngineDiscovery.discover(EngineDiscovery.Spec.parse(u), Duration.ofSeconds(10))) {
                sub.addEngine(e); // IOException: the engine did not say, in one line
            }
        }
        return enginesFile == null ? null : EnginesFile.watch(enginesFile, sub, Duration.ofSeconds(1));
    }

    /** Feeds {@code index} until stopped, then answers the queries and prints the results and the stats. */
    private int listen(Plan plan, PrefixIndex index, ListenMetrics m, Lifecycle life) throws Exception {
        KvEventSubscriber sub = KvEventSubscriber.builder(index)
                .replayTimeout(plan.replayWait())
                .resumeFrom(index.snapshotMetadata())
                .build();
        boolean saved = true;
        TrtllmFeed trtllm = null;
        Thread feed = null;
        EnginesFile watched = null;
        try {
            watched = subscribe(sub, plan);
            if (m != null) {
                m.watch(sub, watch.absent.readyWithAbsentEngines);
            }
            if (trtllmEvents != null) {
                trtllm = new TrtllmFeed(trtllmEvents, index);
                feed = startFeed(trtllm, plan.specs(), index);
            }
            life.status("subscribed to " + sub.engines().size() + " engine(s) ("
                    + (plan.runFor() == null ? "until Ctrl-C" : "for " + watch.run.duration + " s") + ")");
            boolean feedOnly = plan.specs().isEmpty() && engineUrls.isEmpty() && enginesFile == null;
            runUntilStopped(sub, plan, feedOnly ? feed : null, life, m);
            if (snapshot != null) {
                saved = save(sub, life, m);
            }
            life.stopping();
        } finally {
            if (watched != null) {
                watched.close();
            }
            sub.close(); // nothing is applied after this: the stats below describe the index the queries see
        }
        SubscriberStats finalStats = sub.stats();
        if (feed != null && !feedDone(feed, trtllm, plan, life)) {
            return 1;
        }
        if (plan.queryFile() != null && !runQueries(plan.queryFile(), index, System.err)) {
            return 1;
        }
        String stats = finalStats.toJson();
        life.result(
                finalStats.summary(), trtllm == null ? new String[] {stats} : new String[] {trtllm.toJson(), stats});
        if (!watch.run.quiet) {
            IndexStats is = index.stats();
            life.log(String.format(
                    "the index holds %d blocks of %d workers in %.1f MiB (budget: %s)",
                    is.blocks(),
                    is.workers(),
                    is.bytesUsed() / 1048576.0,
                    plan.config().memoryBudgetBytes() == IndexConfig.UNLIMITED
                            ? "unlimited"
                            : String.format("%.1f MiB", plan.config().memoryBudgetBytes() / 1048576.0)));
        }
        return saved ? 0 : 1;
    }

    /** Starts the thread that applies the TensorRT-LLM events of {@code --trtllm-events}. */
    private static Thread startFeed(TrtllmFeed trtllm, List<EngineEndpoint> specs, PrefixIndex index) {
        long id = trtllm.workerId;
        if (specs.stream().anyMatch(e -> e.workerId() == id)) { // one writer per worker id
            throw new IllegalArgumentException("--trtllm-events: worker " + Long.toUnsignedString(id)
                    + " is also an --engine's worker; give it an id of its own");
        }
        if (index.workers().stream().anyMatch(w -> w.workerId() == id)) {
            // restored: its events carry no sequence numbers to resume from, so what was saved of its
            // worker may be stale; it starts afresh
            index.apply(new KvEvent.RemoveWorker(id));
        }
        Thread feed = new Thread(trtllm, "kvprefix-trtllm-events");
        feed.setDaemon(true); // a pipe that never closes must not keep the JVM after --duration
        feed.start();
        return feed;
    }

    /** Waits for the TensorRT-LLM feed to end (a moment, after --duration); false if it failed. */
    private boolean feedDone(Thread feed, TrtllmFeed trtllm, Plan plan, Lifecycle life) throws InterruptedException {
        if (plan.runFor() == null && plan.specs().isEmpty()) {
            feed.join(); // the loop ended with its input, or on Ctrl-C
        } else {
            feed.join(100); // --duration is over: what was read so far counts
        }
        if (trtllm.error() != null) {
            life.log(trtllm.error());
            return false;
        }
        return true;
    }

    /**
     * Until {@code --duration}, a signal, or (with only a TensorRT-LLM feed, {@code feedOnly}) the end
     * of its input: saves the snapshot every {@code --snapshot-interval} (if any) and prints a stats line
     * every {@code --stats-interval} (with engines).
     */
    private void runUntilStopped(KvEventSubscriber sub, Plan plan, Thread feedOnly, Lifecycle life, ListenMetrics m)
            throws InterruptedException {
        List<Lifecycle.Periodic> tasks = new ArrayList<>();
        if (plan.saveEvery() != null) {
            tasks.add(new Lifecycle.Periodic(plan.saveEvery(), () -> save(sub, life, m)));
        }
        tasks.add(new Lifecycle.Periodic(plan.every(), () -> {
            if (feedOnly == null) {
                life.status(sub.stats().summary());
            }
        }));
        life.runUntilStopped(plan.runFor(), feedOnly == null ? null : () -> !feedOnly.isAlive(), tasks);
    }

    /** The index: restored from {@code --snapshot} if the file exists and can be, otherwise empty. */
    private PrefixIndex openIndex(IndexConfig config, Lifecycle life) {
        if (snapshot == null || !Files.exists(snapshot)) {
            return Implementations.create(indexOptions.impl, config);
        }
        long t0 = System.nanoTime();
        try {
            PrefixIndex index = Implementations.restore(indexOptions.impl, snapshot, config);
            if (!watch.run.quiet) {
                life.log(String.format(
                        Locale.ROOT,
                        "restored %s: %d workers, %d blocks held (%.1f ms)",
                        snapshot,
                        index.workers().size(),
                        index.stats().blocks(),
                        (System.nanoTime() - t0) / 1e6));
            }
            return index;
        } catch (SnapshotException e) {
            Path aside = keepAside(e);
            life.log(e.getMessage() + "; kept it as " + aside + "; starting with an empty index");
            return Implementations.create(indexOptions.impl, config);
        }
    }

    /**
     * A snapshot that was refused is never overwritten (docs/OPERATING.md section 4): it is renamed to
     * {@code FILE.refused-TIME} next to it; if that fails, listen does not start.
     */
    private Path keepAside(SnapshotException refused) {
        String stamp = java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
                .withZone(java.time.ZoneOffset.UTC)
                .format(java.time.Instant.now());
        Path aside = snapshot.resolveSibling(snapshot.getFileName() + ".refused-" + stamp);
        try {
            return Files.move(snapshot, aside, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (java.io.IOException | RuntimeException e) {
            throw new IllegalArgumentException(refused.getMessage() + "; it cannot be kept aside as " + aside + " ("
                    + e.getMessage() + "), so listen does not start rather than overwrite it");
        }
    }

    /** Saves {@code --snapshot}; false (after one line on standard error) if it cannot be written. */
    private boolean save(KvEventSubscriber sub, Lifecycle life, ListenMetrics m) {
        long t0 = System.nanoTime();
        try {
            sub.snapshot(snapshot);
        } catch (SnapshotException | IllegalStateException e) {
            life.log(e.getMessage() + " (the previous snapshot is kept)");
            if (m != null) {
                m.saved(false);
            }
            return false;
        }
        if (m != null) {
            m.saved(true);
        }
        life.status(String.format(Locale.ROOT, "saved %s (%.1f ms)", snapshot, (System.nanoTime() - t0) / 1e6));
        return true;
    }

    /** The index's configuration from --impl, --max-workers and --memory-budget (a usage error names the option). */
    IndexConfig indexConfig() {
        IndexConfig.Builder cb = indexOptions.config();
        if (memoryBudget != null) {
            long bytes = Check.parseBytes(memoryBudget, "--memory-budget");
            try {
                cb.memoryBudgetBytes(bytes);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--memory-budget: " + e.getMessage(), e);
            }
        }
        return cb.build();
    }

    private static PrefixIndex instrument(ListenMetrics m, PrefixIndex index) {
        return m == null ? index : m.instrument(index);
    }

    /**
     * Runs the match lines of {@code file} (docs/SPEC.md section 5, read by {@link OpStreamReader}) and prints one
     * result line for each; event lines are skipped (the index reflects the engines), invalid lines
     * are answered {@code invalid_input}. False if the file cannot be read.
     */
    static boolean runQueries(Path file, PrefixIndex index, PrintStream err) {
        MatchResult result = new MatchResult();
        long skipped = 0;
        try (InputStream in = Files.newInputStream(file)) {
            OpStreamWriter out = new OpStreamWriter(System.out);
            OpStreamReader reader = new OpStreamReader(in);
            for (Op op; (op = reader.next()) != null; ) {
                long lineNo = reader.lines();
                switch (op) {
                    case Op.HashMatch m -> {
                        index.match(m.localHashes(), 0, m.localHashes().length, result);
                        out.scores(result);
                    }
                    case Op.TokenMatch t -> {
                        index.match(t.tokenIds(), 0, t.tokenIds().length, t.hasher(index.config()), t.mm(), result);
                        out.scores(result);
                    }
                    case Op.Explain x -> out.explanation(x.on(index));
                    case Op.Event e -> skipped++;
                    case Op.Invalid i -> {
                        err.println("kvprefix listen: --queries line " + lineNo + ": invalid_input: " + i.reason());
                        out.status(EventStatus.INVALID_INPUT);
                    }
                }
            }
            out.flush();
        } catch (IOException e) {
            err.println("kvprefix listen: cannot read --queries '" + file + "': " + e.getMessage());
            return false;
        }
        if (skipped > 0) {
            err.println(
                    "kvprefix listen: skipped " + skipped + " event line(s) of --queries (only match lines are run)");
        }
        return true;
    }
}
