package io.kvprefix.standin.internal;

import io.kvprefix.BlockHasher;
import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.simulator.Engine;
import io.kvprefix.simulator.EngineHost;
import io.kvprefix.simulator.EngineRequest;
import io.kvprefix.simulator.EngineSettings;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.MockEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The simulator's engine model ({@link Engine}) driven in real time: one thread per engine runs its
 * timers at {@code t0 + at * timeScale} on the wall clock and the calls from HTTP handlers in between,
 * so the engine stays confined to one thread as its contract asks. Decode runs are off, so each
 * output token is reported when its step ends. The KV events of one timer (one engine step) go out as
 * one batch, as vLLM publishes one batch per scheduler step.
 *
 * <p>Reported cached tokens follow vLLM's scheduler: a prompt's hit is capped at its full blocks
 * before its last token, which vLLM always computes ({@code max_cache_hit_length = num_tokens - 1}).
 *
 * <p>Thread-safety: {@link #submit}, {@link #stats} and {@link #close} may be called from any thread;
 * everything else runs on the engine thread.
 */
public final class RealTimeEngine implements Generation.Engine, EngineHost, AutoCloseable {
    private static final long IDLE_PARK_NANOS = 100_000_000L;

    private final EngineSettings settings;
    private final Worker worker;
    private final int cacheBlocks;
    /** Replaced by a new, empty engine on a prefix-cache reset (engine thread only). */
    private Engine engine;

    private final BlockHasher hasher;
    private final int blockSize;
    private final double timeScale;
    private final int vocab;
    private final EventPublisher publisher;
    private final long t0 = System.nanoTime();
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();
    private final List<WireEvent> batch = new ArrayList<>();
    /** What the HTTP side is told of one task or timer, told after its events are queued (as vLLM publishes a step's events before its outputs leave). */
    private final List<Runnable> told = new ArrayList<>();

    private final Thread thread;
    /** Identities of requests in the cache (one running request per identity). */
    private final java.util.concurrent.atomic.AtomicInteger ids = new java.util.concurrent.atomic.AtomicInteger();

    private volatile boolean running = true;
    private volatile Generation.EngineStats stats = new Generation.EngineStats(0, 0, 0, 0, 0, 0, 0, 0, 0);

    private long timerSerial;
    private long prefixQueries;
    private long prefixHits;
    private long promptTokens;
    private long generationTokens;
    private long finished;
    private long aborted;

    private record Timer(long at, long serial, Runnable action) implements Comparable<Timer> {
        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : Long.compare(serial, o.serial);
        }
    }

    /** One request in the engine, with what the HTTP side is told. */
    private final class Running extends EngineRequest implements Generation.Handle {
        final int[] prompt;
        final long seed;
        final Generation.Listener listener;
        boolean aborted;

        Running(int id, Generation.Request r, Generation.Listener listener) {
            super(EngineRequest.tokenPrompt(id, r.prompt(), r.maxTokens(), hasher));
            this.prompt = r.prompt();
            this.seed = r.outputSeed();
            this.listener = listener;
        }

        @Override
        public void abort() {
            post(() -> {
                if (!aborted) {
                    aborted = true;
                    if (engine.abort(this)) {
                        RealTimeEngine.this.aborted++;
                    }
                }
            });
        }
    }

    /**
     * An idle engine of worker {@code worker}: a cache of {@code cacheBlocks} blocks of
     * {@code blockSize} tokens, the speeds of {@code settings}, its events to {@code publisher}.
     */
    public RealTimeEngine(
            Worker worker,
            int blockSize,
            int cacheBlocks,
            EngineSettings settings,
            double timeScale,
            int vocab,
            EventPublisher publisher) {
        this.hasher = BlockHasher.of(blockSize);
        this.blockSize = blockSize;
        this.timeScale = timeScale;
        this.vocab = vocab;
        this.publisher = publisher;
        this.settings = settings.withDecodeRuns(false);
        this.worker = worker;
        this.cacheBlocks = cacheBlocks;
        this.engine = newEngine();
        this.thread = new Thread(this::loop, "kvprefix-standin-engine-" + worker.workerId());
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public Generation.Handle submit(Generation.Request request, Generation.Listener listener) {
        Running r = new Running(ids.getAndIncrement() & Integer.MAX_VALUE, request, listener);
        post(() -> engine.submit(r));
        return r;
    }

    /** An idle engine over an empty cache whose blocks are named by their local hashes. */
    private Engine newEngine() {
        MockEngine cache =
                new MockEngine(worker, cacheBlocks, 0, blockSize, java.util.function.LongUnaryOperator.identity());
        return Engine.create(settings, cache, this);
    }

    @Override
    public void resetPrefixCache() {
        post(() -> {
            if (engine.runningRequests() > 0 || engine.waitingRequests() > 0) {
                // vLLM refuses too while blocks are in use, and its endpoint does not say so either
                System.err.println("kvprefix standin: engine " + worker.workerId()
                        + ": prefix cache not reset: requests are running");
                return;
            }
            engine = newEngine();
            batch.add(new WireEvent.Cleared());
        });
    }

    @Override
    public Generation.EngineStats stats() {
        return stats;
    }

    private void post(Runnable task) {
        inbox.add(task);
        LockSupport.unpark(thread);
    }

    private void loop() {
        while (running) {
            for (Runnable task; (task = inbox.poll()) != null; ) {
                run(task);
            }
            Timer next = timers.peek();
            long now = now();
            if (next != null && next.at() <= now) {
                timers.poll();
                run(next.action());
                continue;
            }
            long park = next == null ? IDLE_PARK_NANOS : (long) Math.ceil((next.at() - now) * timeScale);
            LockSupport.parkNanos(this, Math.max(1, Math.min(park, IDLE_PARK_NANOS)));
        }
    }

    /** Runs one task or timer; then the events it produced go out as one batch, and the stats are refreshed. */
    private void run(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            System.err.println("kvprefix standin: engine error: " + e);
        }
        if (!batch.isEmpty()) {
            publisher.publish(List.copyOf(batch));
            batch.clear();
        }
        for (Runnable r : told) {
            r.run();
        }
        told.clear();
        stats = new Generation.EngineStats(
                engine.runningRequests(),
                engine.waitingRequests(),
                engine.kvUsage(),
                prefixQueries,
                prefixHits,
                promptTokens,
                generationTokens,
                finished,
                aborted);
    }

    @Override
    public long now() {
        return (long) ((System.nanoTime() - t0) / timeScale);
    }

    @Override
    public void schedule(long at, Runnable action) {
        timers.add(new Timer(at, timerSerial++, action));
    }

    @Override
    public void publish(EngineRequest source, int firstBlock, List<KvEvent> events) {
        for (KvEvent e : events) {
            switch (e) {
                case KvEvent.Stored s -> {
                    int[] prompt = ((Running) source).prompt;
                    int[] tokens = Arrays.copyOfRange(
                            prompt, firstBlock * blockSize, (firstBlock + s.blockHashes().length) * blockSize);
                    batch.add(new WireEvent.Stored(
                            s.parentHash().isPresent(), s.parentHash().orElse(0), s.blockHashes(), tokens, blockSize));
                }
                case KvEvent.Removed r -> batch.add(new WireEvent.Removed(r.blockHashes()));
                default -> throw new IllegalStateException("the engine model published " + e);
            }
        }
    }

    @Override
    public void admitted(EngineRequest r, AdmitResult a) {
        Running x = (Running) r;
        int cached = reportedCachedTokens(x.prompt.length, r.cachedTokens(), blockSize);
        prefixQueries += x.prompt.length;
        prefixHits += cached;
        promptTokens += x.prompt.length;
        told.add(() -> x.listener.admitted(cached));
    }

    /** vLLM's hit: at most the full blocks before the prompt's last token. */
    static int reportedCachedTokens(int promptLength, long cachedTokens, int blockSize) {
        long cap = (long) (promptLength - 1) / blockSize * blockSize;
        return (int) Math.min(cachedTokens, cap);
    }

    @Override
    public void firstToken(EngineRequest r) {
        Running x = (Running) r;
        generationTokens++;
        int token = OutputTokens.token(x.seed, 0, vocab);
        told.add(() -> x.listener.token(0, token));
    }

    @Override
    public void decoded(EngineRequest r, int tokens) {
        Running x = (Running) r;
        int last = r.outputSoFar();
        for (int i = last - tokens; i < last; i++) {
            generationTokens++;
            int index = i;
            int token = OutputTokens.token(x.seed, i, vocab);
            told.add(() -> x.listener.token(index, token));
        }
    }

    @Override
    public void finished(EngineRequest r) {
        finished++;
        Generation.Listener l = ((Running) r).listener;
        told.add(l::finished);
    }

    /** Stops the engine thread (requests in flight get no more callbacks). */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
