package io.kvprefix.simulator;

import io.kvprefix.workload.MockEngine;
import java.time.Duration;
import java.util.Locale;

/**
 * The settings of a routing simulation: the deployment, the engine model ({@link EngineModel}; the
 * package description has its step rules), the event delay, the scenario (request rate, a slow engine,
 * a late joiner) and the routers' options. Every policy of one comparison runs with the same settings;
 * {@link #engineSettings} gives one engine's.
 *
 * <p>Thread-safety: immutable.
 */
public final class SimSettings {
    /** Prefill speed of one worker: 10,000 uncached tokens per second (an A100-class 8B model). */
    public static final double DEFAULT_PREFILL_TOKENS_PER_S = 10_000;
    /** Decode speed of one request on an otherwise idle worker: 50 tokens per second. */
    public static final double DEFAULT_DECODE_TOKENS_PER_S = 50;
    /**
     * vLLM's {@code max_num_batched_tokens} for an online server on GPUs other than the large ones
     * (A100 included; {@code EngineArgs.get_batch_defaults}), matching the A100-class prefill speed.
     */
    public static final int DEFAULT_MAX_BATCHED_TOKENS = 2048;
    /** vLLM's {@code max_num_seqs} default for those GPUs, and Dynamo's mocker's. */
    public static final int DEFAULT_MAX_NUM_SEQS = 256;
    /**
     * Engine-to-router KV event delay on top of the engine's own step (events are published after
     * the step that computed their blocks): 10 ms, an assumption. No measured figure of this delay in
     * a busy deployment is published; Dynamo's event-plane benchmark (ai-dynamo/dynamo PR #10346)
     * measures single-host loopback only (docs/BENCHMARKS.md section 5).
     */
    public static final Duration DEFAULT_EVENT_DELAY = Duration.ofMillis(10);
    /**
     * Onload speed from the CPU tier: 400,000 tokens per second, 40 times the prefill rate. From a
     * published measurement (H20, Qwen3-Coder-30B-A3B, vLLM 0.18.1's offloading connector, agentic-kvc):
     * a 64K-token prompt took 272 ms as a CPU hit and 111 ms as a GPU hit, so about 161 ms to load
     * 64K tokens over PCIe.
     */
    public static final double DEFAULT_ONLOAD_TOKENS_PER_S = 400_000;
    /** How often llm-d's scheduler refreshes the engines' metrics ({@code defaultRefreshInterval}): 50 ms. */
    public static final Duration METRICS_REFRESH = Duration.ofMillis(50);

    private final int workers;
    private final int cacheBlocks;
    private final int cpuBlocks;
    private final double onloadTokensPerS;
    private final double prefillTokensPerS;
    private final double decodeTokensPerS;
    private final long seed;
    private final EngineModel engine;
    private final int maxBatchedTokens;
    private final int maxNumSeqs;
    private final long eventDelayNs;
    private final double rate;
    private final double slowFactor;
    private final double joinAt;
    private final double overlapWeight;
    private final double temperature;
    private final int minMatchBlocks;
    private final boolean spreadMisses;
    private final Duration predictedTtl;
    private final long predictedMaxBlocks;
    private final boolean decodeRuns;

    private SimSettings(Builder b) {
        this.workers = b.workers;
        this.cacheBlocks = b.cacheBlocks;
        this.cpuBlocks = b.cpuBlocks;
        this.onloadTokensPerS = b.onloadTokensPerS;
        this.prefillTokensPerS = b.prefillTokensPerS;
        this.decodeTokensPerS = b.decodeTokensPerS;
        this.seed = b.seed;
        this.engine = b.engine;
        this.maxBatchedTokens = b.maxBatchedTokens;
        this.maxNumSeqs = b.maxNumSeqs;
        this.eventDelayNs = b.eventDelayNs;
        this.rate = b.rate;
        this.slowFactor = b.slowFactor;
        this.joinAt = b.joinAt;
        this.overlapWeight = b.overlapWeight;
        this.temperature = b.temperature;
        this.minMatchBlocks = b.minMatchBlocks;
        this.spreadMisses = b.spreadMisses;
        this.predictedTtl = b.predictedTtl;
        this.predictedMaxBlocks = b.predictedMaxBlocks;
        this.decodeRuns = b.decodeRuns;
    }

    /** The defaults: 16 workers of 16,384 blocks, vllm-chunked engines, 10 ms event delay, the routers' defaults, seed 42. */
    public static SimSettings defaults() {
        return builder().build();
    }

    /** A builder at the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these settings. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.workers = workers;
        b.cacheBlocks = cacheBlocks;
        b.cpuBlocks = cpuBlocks;
        b.onloadTokensPerS = onloadTokensPerS;
        b.prefillTokensPerS = prefillTokensPerS;
        b.decodeTokensPerS = decodeTokensPerS;
        b.seed = seed;
        b.engine = engine;
        b.maxBatchedTokens = maxBatchedTokens;
        b.maxNumSeqs = maxNumSeqs;
        b.eventDelayNs = eventDelayNs;
        b.rate = rate;
        b.slowFactor = slowFactor;
        b.joinAt = joinAt;
        b.overlapWeight = overlapWeight;
        b.temperature = temperature;
        b.minMatchBlocks = minMatchBlocks;
        b.spreadMisses = spreadMisses;
        b.predictedTtl = predictedTtl;
        b.predictedMaxBlocks = predictedMaxBlocks;
        b.decodeRuns = decodeRuns;
        return b;
    }

    /** Number of workers (mock engines). */
    public int workers() {
        return workers;
    }

    /** Blocks per mock engine's prefix cache. */
    public int cacheBlocks() {
        return cacheBlocks;
    }

    /**
     * Blocks of each mock engine's CPU tier (0: none): the GPU's evicted blocks go there, and a request
     * whose prefix continues there loads those blocks instead of computing them (docs/SPEC.md section 3.1).
     */
    public int cpuBlocks() {
        return cpuBlocks;
    }

    /** How fast a worker loads tokens back from its CPU tier, tokens per second. */
    public double onloadTokensPerS() {
        return onloadTokensPerS;
    }

    /** Prefill speed of one worker, uncached tokens per second. */
    public double prefillTokensPerS() {
        return prefillTokensPerS;
    }

    /** Decode speed of one request on an idle worker, tokens per second. */
    public double decodeTokensPerS() {
        return decodeTokensPerS;
    }

    /** Seed of the random policies and of the routers' sampling. */
    public long seed() {
        return seed;
    }

    /** The engine model. */
    public EngineModel engine() {
        return engine;
    }

    /** Token budget of one engine step ({@code vllm-chunked}). */
    public int maxBatchedTokens() {
        return maxBatchedTokens;
    }

    /** Most running requests per engine ({@code vllm-chunked}). */
    public int maxNumSeqs() {
        return maxNumSeqs;
    }

    /** Delay from an engine publishing KV events to the index applying them, nanoseconds of simulated time. */
    public long eventDelayNs() {
        return eventDelayNs;
    }

    /** Request-rate multiplier: arrival times are the trace's divided by it (2 = twice the rate). */
    public double rate() {
        return rate;
    }

    /** Worker 0's slowdown: its steps (or prefills and decodes) take this many times longer (1 = none). */
    public double slowFactor() {
        return slowFactor;
    }

    /**
     * When the last worker joins, as a fraction of the trace's arrival span (0 = from the start; 0.5 =
     * halfway): until then it is not registered with any policy and gets no requests.
     */
    public double joinAt() {
        return joinAt;
    }

    /** The Dynamo-cost router's overlap weight. */
    public double overlapWeight() {
        return overlapWeight;
    }

    /** The Dynamo-cost router's temperature. */
    public double temperature() {
        return temperature;
    }

    /** The Dynamo-cost router's minimum match in blocks. */
    public int minMatchBlocks() {
        return minMatchBlocks;
    }

    /** Whether the Dynamo-cost router spreads misses. */
    public boolean spreadMisses() {
        return spreadMisses;
    }

    /** Block time to live of Dynamo's approximate (no events) mode, simulated time. */
    public Duration predictedTtl() {
        return predictedTtl;
    }

    /** Bound on predicted blocks of Dynamo's approximate mode. */
    public long predictedMaxBlocks() {
        return predictedMaxBlocks;
    }

    /** The settings of one engine of this simulation, {@code slowness} times slower than set. */
    public EngineSettings engineSettings(double slowness) {
        return new EngineSettings(
                engine,
                prefillTokensPerS,
                decodeTokensPerS,
                maxBatchedTokens,
                maxNumSeqs,
                onloadTokensPerS,
                slowness,
                decodeRuns);
    }

    /** A one-line description of the engines and the scenario, for tables. */
    public String describe() {
        StringBuilder sb =
                new StringBuilder(String.format(Locale.ROOT, "%d workers x %,d blocks", workers, cacheBlocks));
        if (cpuBlocks > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    " + %,d CPU-tier blocks (loaded back at %,.0f tokens/s; a hit counts GPU and CPU blocks)",
                    cpuBlocks,
                    onloadTokensPerS));
        }
        sb.append("; engine ").append(engine.key());
        if (engine == EngineModel.VLLM_CHUNKED) {
            sb.append(String.format(
                    Locale.ROOT,
                    " (%,d tokens per step, %,.0f prefill tokens/s, %,.0f decode steps/s)",
                    maxBatchedTokens,
                    prefillTokensPerS,
                    decodeTokensPerS));
        } else {
            sb.append(String.format(
                    Locale.ROOT,
                    " (prefill %,.0f tokens/s per worker, decode %,.0f tokens/s per request)",
                    prefillTokensPerS,
                    decodeTokensPerS));
        }
        sb.append(String.format(Locale.ROOT, "; KV events %.0f ms after the step", eventDelayNs / 1e6));
        if (rate != 1) {
            sb.append(String.format(Locale.ROOT, "; request rate x%s", trim(rate)));
        }
        if (slowFactor != 1) {
            sb.append(String.format(Locale.ROOT, "; worker 0 %sx slower", trim(slowFactor)));
        }
        if (joinAt > 0) {
            sb.append(
                    String.format(Locale.ROOT, "; worker %d joins at %.0f%% of the trace", workers - 1, 100 * joinAt));
        }
        return sb.toString();
    }

    static String trim(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    /**
     * Builds {@link SimSettings}; every setter checks its value and throws {@link IllegalArgumentException}
     * naming the command-line flag.
     *
     * <p>Thread-safety: not thread-safe.
     */
    public static final class Builder {
        private int workers = 16;
        private int cacheBlocks = MockEngine.DEFAULT_CAPACITY;
        private int cpuBlocks = 0;
        private double onloadTokensPerS = DEFAULT_ONLOAD_TOKENS_PER_S;
        private double prefillTokensPerS = DEFAULT_PREFILL_TOKENS_PER_S;
        private double decodeTokensPerS = DEFAULT_DECODE_TOKENS_PER_S;
        private long seed = 42;
        private EngineModel engine = EngineModel.VLLM_CHUNKED;
        private int maxBatchedTokens = DEFAULT_MAX_BATCHED_TOKENS;
        private int maxNumSeqs = DEFAULT_MAX_NUM_SEQS;
        private long eventDelayNs = DEFAULT_EVENT_DELAY.toNanos();
        private double rate = 1;
        private double slowFactor = 1;
        private double joinAt = 0;
        private double overlapWeight = 1.0;
        private double temperature = 0;
        private int minMatchBlocks = 0;
        private boolean spreadMisses = false;
        private Duration predictedTtl = Duration.ofSeconds(120);
        private long predictedMaxBlocks = 1L << 20;
        private boolean decodeRuns = true;

        private Builder() {}

        public Builder workers(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("--workers must be >= 1, got " + n);
            }
            workers = n;
            return this;
        }

        public Builder cacheBlocks(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("--cache-blocks must be >= 1, got " + n);
            }
            cacheBlocks = n;
            return this;
        }

        public Builder cpuBlocks(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("--cpu-blocks must be >= 0, got " + n);
            }
            cpuBlocks = n;
            return this;
        }

        public Builder onloadTokensPerS(double v) {
            onloadTokensPerS = positive(v, "--onload-rate");
            return this;
        }

        public Builder prefillTokensPerS(double v) {
            prefillTokensPerS = positive(v, "--prefill-rate");
            return this;
        }

        public Builder decodeTokensPerS(double v) {
            decodeTokensPerS = positive(v, "--decode-rate");
            return this;
        }

        public Builder seed(long s) {
            seed = s;
            return this;
        }

        public Builder engine(EngineModel m) {
            engine = java.util.Objects.requireNonNull(m, "engine");
            return this;
        }

        public Builder maxBatchedTokens(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("--max-batched-tokens must be >= 1, got " + n);
            }
            maxBatchedTokens = n;
            return this;
        }

        public Builder maxNumSeqs(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("--max-num-seqs must be >= 1, got " + n);
            }
            maxNumSeqs = n;
            return this;
        }

        public Builder eventDelay(Duration d) {
            if (d.isNegative() || d.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("--event-delay must be between 0 and 1 hour, got " + d);
            }
            eventDelayNs = d.toNanos();
            return this;
        }

        public Builder rate(double r) {
            rate = positive(r, "--rate");
            return this;
        }

        public Builder slowFactor(double f) {
            if (!(f >= 1) || Double.isInfinite(f)) {
                throw new IllegalArgumentException("--slow-factor must be a finite number >= 1, got " + f);
            }
            slowFactor = f;
            return this;
        }

        public Builder joinAt(double fraction) {
            if (!(fraction >= 0 && fraction < 1)) {
                throw new IllegalArgumentException("--join-at must be in [0, 1), got " + fraction);
            }
            joinAt = fraction;
            return this;
        }

        public Builder overlapWeight(double w) {
            if (!(w >= 0) || Double.isInfinite(w)) {
                throw new IllegalArgumentException("--overlap-weight must be a finite number >= 0, got " + w);
            }
            overlapWeight = w;
            return this;
        }

        public Builder temperature(double t) {
            if (!(t >= 0) || Double.isInfinite(t)) {
                throw new IllegalArgumentException("--temperature must be a finite number >= 0, got " + t);
            }
            temperature = t;
            return this;
        }

        public Builder minMatchBlocks(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("--min-match-blocks must be >= 0, got " + n);
            }
            minMatchBlocks = n;
            return this;
        }

        public Builder spreadMisses(boolean on) {
            spreadMisses = on;
            return this;
        }

        public Builder predictedTtl(Duration ttl) {
            if (ttl.isNegative() || ttl.isZero()) {
                throw new IllegalArgumentException("--predicted-ttl must be positive, got " + ttl);
            }
            predictedTtl = ttl;
            return this;
        }

        public Builder predictedMaxBlocks(long n) {
            if (n < 1) {
                throw new IllegalArgumentException("--predicted-max-blocks must be >= 1, got " + n);
            }
            predictedMaxBlocks = n;
            return this;
        }

        private static double positive(double v, String flag) {
            if (!(v > 0) || Double.isInfinite(v)) {
                throw new IllegalArgumentException(flag + " must be a positive number, got " + v);
            }
            return v;
        }

        /** Runs of decode-only steps as one timer (on by default; the tests turn it off to see it changes nothing). */
        Builder decodeRuns(boolean on) {
            decodeRuns = on;
            return this;
        }

        public SimSettings build() {
            return new SimSettings(this);
        }
    }
}
