package io.kvprefix.standin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What a stand-in process serves: how many engines, their worker ids and ports, the model's name,
 * context length and tokenizer, the engine model's cache and speed, the event encoding and replay
 * buffer, and whether usage reports cached tokens. Each setting is a {@code kvprefix standin} option
 * of the same name; {@link #check} refuses a bad value with one line naming the option. The engine
 * model and its defaults are docs/BENCHMARKS.md section 5's.
 *
 * <p>Thread-safety: immutable.
 *
 * @param engines how many independent engines ({@code --engines}, at least 1)
 * @param firstWorker the first engine's worker id; the others count up ({@code --worker-id})
 * @param host the address every socket binds ({@code --host})
 * @param httpPort the first engine's HTTP port, the others count up; 0: free ports ({@code --port})
 * @param eventsPort the first KV-event PUB port, likewise ({@code --events-port})
 * @param replayPort the first replay ROUTER port, likewise ({@code --replay-port})
 * @param model the served model name ({@code --model})
 * @param tokenizer a directory with {@code tokenizer.json}, or null: token ids only ({@code --tokenizer})
 * @param maxModelLen the context length ({@code --max-model-len})
 * @param blockSize tokens per KV block ({@code --block-size})
 * @param cacheBlocks blocks each engine's prefix cache holds ({@code --cache-blocks})
 * @param timeScale wall seconds per model second: 0.1 runs ten times faster ({@code --time-scale})
 * @param prefillUsPerToken prefill time per uncached prompt token, microseconds ({@code --prefill-us-per-token})
 * @param decodeUsPerToken decode step time, microseconds per output token ({@code --decode-us-per-token})
 * @param promptTokensDetails report {@code usage.prompt_tokens_details.cached_tokens} ({@code --enable-prompt-tokens-details})
 * @param seed the seed of the output tokens ({@code --seed})
 * @param encoding {@code map} (vLLM since PR #42892) or {@code array} ({@code --event-encoding})
 * @param replayBuffer batches each engine keeps for replay ({@code --replay-buffer}, vLLM's {@code buffer_steps})
 * @param maxNumSeqs most requests running at once per engine ({@code --max-num-seqs}, vLLM's flag)
 * @param maxNumBatchedTokens token budget of one engine step ({@code --max-num-batched-tokens}, vLLM's flag)
 */
public record StandinSettings(
        int engines,
        long firstWorker,
        String host,
        int httpPort,
        int eventsPort,
        int replayPort,
        String model,
        Path tokenizer,
        int maxModelLen,
        int blockSize,
        int cacheBlocks,
        double timeScale,
        double prefillUsPerToken,
        double decodeUsPerToken,
        boolean promptTokensDetails,
        long seed,
        String encoding,
        int replayBuffer,
        int maxNumSeqs,
        int maxNumBatchedTokens) {

    /** The defaults: one engine on free loopback ports, 16-token blocks, the simulator's engine speeds. */
    public static StandinSettings defaults() {
        return new StandinSettings(
                1,
                1,
                "127.0.0.1",
                0,
                0,
                0,
                "kvprefix-standin",
                null,
                32_768,
                16,
                16_384,
                1.0,
                100,
                20_000,
                false,
                0,
                "map",
                10_000,
                256,
                2048);
    }

    /** Refuses a bad setting with one line naming its option; returns this. */
    public StandinSettings check() {
        atLeast("--engines", engines, 1, 4096);
        if (firstWorker < 0 || firstWorker + engines - 1 < firstWorker) {
            throw new IllegalArgumentException("--worker-id must be >= 0, got " + firstWorker);
        }
        port("--port", httpPort);
        port("--events-port", eventsPort);
        port("--replay-port", replayPort);
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("--host must name an address, got an empty one");
        }
        if (model == null || model.isBlank()) {
            throw new IllegalArgumentException("--model must be a non-empty name");
        }
        if (tokenizer != null && !Files.isDirectory(tokenizer)) {
            throw new IllegalArgumentException("--tokenizer " + tokenizer
                    + (Files.exists(tokenizer) ? ": is a file, not a directory" : ": no such directory"));
        }
        atLeast("--block-size", blockSize, 1, 65_536);
        atLeast("--cache-blocks", cacheBlocks, 1, 1 << 28);
        atLeast("--max-model-len", maxModelLen, 2, Integer.MAX_VALUE);
        finite("--time-scale", timeScale);
        finite("--prefill-us-per-token", prefillUsPerToken);
        finite("--decode-us-per-token", decodeUsPerToken);
        if (!encoding.equals("map") && !encoding.equals("array")) {
            throw new IllegalArgumentException("--event-encoding must be map or array, got '" + encoding + "'");
        }
        atLeast("--replay-buffer", replayBuffer, 1, 100_000_000);
        atLeast("--max-num-seqs", maxNumSeqs, 1, 1 << 20);
        atLeast("--max-num-batched-tokens", maxNumBatchedTokens, 1, Integer.MAX_VALUE);
        return this;
    }

    private static void atLeast(String option, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(option + " must be "
                    + (max == Integer.MAX_VALUE ? ">= " + min : "in " + min + ".." + max) + ", got " + v);
        }
    }

    private static void port(String option, int v) {
        if (v < 0 || v > 65_535) {
            throw new IllegalArgumentException(option + " must be 0..65535 (0: a free port), got " + v);
        }
    }

    private static void finite(String option, double v) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(option + " must be a finite number > 0, got "
                    + (Double.isNaN(v) ? "NaN" : String.format(Locale.ROOT, "%s", v)));
        }
    }

    /** A builder starting from these settings. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** A builder starting from the {@link #defaults()}. */
    public static Builder builder() {
        return new Builder(defaults());
    }

    /** Builds settings one option at a time. Thread-safety: not thread-safe; use from one thread. */
    public static final class Builder {
        private int engines;
        private long firstWorker;
        private String host;
        private int httpPort;
        private int eventsPort;
        private int replayPort;
        private String model;
        private Path tokenizer;
        private int maxModelLen;
        private int blockSize;
        private int cacheBlocks;
        private double timeScale;
        private double prefillUsPerToken;
        private double decodeUsPerToken;
        private boolean promptTokensDetails;
        private long seed;
        private String encoding;
        private int replayBuffer;
        private int maxNumSeqs;
        private int maxNumBatchedTokens;

        private Builder(StandinSettings s) {
            engines = s.engines;
            firstWorker = s.firstWorker;
            host = s.host;
            httpPort = s.httpPort;
            eventsPort = s.eventsPort;
            replayPort = s.replayPort;
            model = s.model;
            tokenizer = s.tokenizer;
            maxModelLen = s.maxModelLen;
            blockSize = s.blockSize;
            cacheBlocks = s.cacheBlocks;
            timeScale = s.timeScale;
            prefillUsPerToken = s.prefillUsPerToken;
            decodeUsPerToken = s.decodeUsPerToken;
            promptTokensDetails = s.promptTokensDetails;
            seed = s.seed;
            encoding = s.encoding;
            replayBuffer = s.replayBuffer;
            maxNumSeqs = s.maxNumSeqs;
            maxNumBatchedTokens = s.maxNumBatchedTokens;
        }

        /** {@code --engines}. */
        public Builder engines(int v) {
            engines = v;
            return this;
        }

        /** {@code --worker-id}. */
        public Builder firstWorker(long v) {
            firstWorker = v;
            return this;
        }

        /** {@code --host}. */
        public Builder host(String v) {
            host = v;
            return this;
        }

        /** {@code --port}, {@code --events-port}, {@code --replay-port}. */
        public Builder ports(int http, int events, int replay) {
            httpPort = http;
            eventsPort = events;
            replayPort = replay;
            return this;
        }

        /** {@code --model}. */
        public Builder model(String v) {
            model = v;
            return this;
        }

        /** {@code --tokenizer} (null: none). */
        public Builder tokenizer(Path v) {
            tokenizer = v;
            return this;
        }

        /** {@code --max-model-len}. */
        public Builder maxModelLen(int v) {
            maxModelLen = v;
            return this;
        }

        /** {@code --block-size}. */
        public Builder blockSize(int v) {
            blockSize = v;
            return this;
        }

        /** {@code --cache-blocks}. */
        public Builder cacheBlocks(int v) {
            cacheBlocks = v;
            return this;
        }

        /** {@code --time-scale}. */
        public Builder timeScale(double v) {
            timeScale = v;
            return this;
        }

        /** {@code --prefill-us-per-token} and {@code --decode-us-per-token}. */
        public Builder speeds(double prefillUs, double decodeUs) {
            prefillUsPerToken = prefillUs;
            decodeUsPerToken = decodeUs;
            return this;
        }

        /** {@code --enable-prompt-tokens-details}. */
        public Builder promptTokensDetails(boolean v) {
            promptTokensDetails = v;
            return this;
        }

        /** {@code --seed}. */
        public Builder seed(long v) {
            seed = v;
            return this;
        }

        /** {@code --event-encoding}. */
        public Builder encoding(String v) {
            encoding = v;
            return this;
        }

        /** {@code --replay-buffer}. */
        public Builder replayBuffer(int v) {
            replayBuffer = v;
            return this;
        }

        /** {@code --max-num-seqs} and {@code --max-num-batched-tokens}. */
        public Builder limits(int numSeqs, int batchedTokens) {
            maxNumSeqs = numSeqs;
            maxNumBatchedTokens = batchedTokens;
            return this;
        }

        /** The settings, checked. */
        public StandinSettings build() {
            return new StandinSettings(
                            engines,
                            firstWorker,
                            host,
                            httpPort,
                            eventsPort,
                            replayPort,
                            model,
                            tokenizer,
                            maxModelLen,
                            blockSize,
                            cacheBlocks,
                            timeScale,
                            prefillUsPerToken,
                            decodeUsPerToken,
                            promptTokensDetails,
                            seed,
                            encoding,
                            replayBuffer,
                            maxNumSeqs,
                            maxNumBatchedTokens)
                    .check();
        }
    }
}
