package io.kvprefix.cli;

import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix standin}: runs stand-in vLLM engines (module {@code standin/}, docs/STANDIN.md) until
 * SIGTERM or until standard input closes; prints one {@code READY} line with the bound ports when
 * every engine is up.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "standin",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run stand-in vLLM engines: vLLM's OpenAI API and KV events over the simulated engine model.",
            "Each engine has its own HTTP port (completions, chat, generate, tokenize, render, models,",
            "health, metrics, as vLLM serves them), a KV-event PUB port and a replay ROUTER port (vLLM's",
            "ZMQ/msgpack format). When every socket is bound it prints one line on standard output:",
            "READY {\"engines\":[{\"worker\":W,\"http\":P,\"events\":E,\"replay\":R}, ...]}",
            "and runs until SIGTERM (or Ctrl-C) or until standard input closes."
        })
final class StandinCommand implements Callable<Integer> {
    @Option(
            names = "--engines",
            paramLabel = "N",
            defaultValue = "1",
            description = "engines (default: ${DEFAULT-VALUE})")
    int engines;

    @Option(
            names = "--worker-id",
            paramLabel = "FIRST",
            defaultValue = "1",
            description = "the first engine's worker id; the others count up (default: ${DEFAULT-VALUE})")
    long workerId;

    @Option(
            names = "--host",
            paramLabel = "ADDRESS",
            defaultValue = "127.0.0.1",
            description = "the address every socket binds (default: ${DEFAULT-VALUE})")
    String host;

    @Option(
            names = "--port",
            paramLabel = "P",
            defaultValue = "0",
            description = "the first engine's HTTP port, the others count up (default: 0, free ports)")
    int port;

    @Option(
            names = "--events-port",
            paramLabel = "E",
            defaultValue = "0",
            description = "the first KV-event PUB port, likewise (default: 0, free ports)")
    int eventsPort;

    @Option(
            names = "--replay-port",
            paramLabel = "R",
            defaultValue = "0",
            description = "the first replay ROUTER port, likewise (default: 0, free ports)")
    int replayPort;

    @Option(
            names = "--model",
            paramLabel = "NAME",
            defaultValue = "kvprefix-standin",
            description = "the served model name (default: ${DEFAULT-VALUE})")
    String model;

    @Option(
            names = "--tokenizer",
            paramLabel = "DIR",
            description = "a model directory (tokenizer.json, tokenizer_config.json): text prompts, chat, text out")
    Path tokenizer;

    @Option(
            names = "--max-model-len",
            paramLabel = "TOKENS",
            defaultValue = "32768",
            description = "the context length (default: ${DEFAULT-VALUE})")
    int maxModelLen;

    @Option(
            names = "--block-size",
            paramLabel = "TOKENS",
            defaultValue = "16",
            description = "tokens per KV block (default: ${DEFAULT-VALUE})")
    int blockSize;

    @Option(
            names = "--cache-blocks",
            paramLabel = "B",
            defaultValue = "16384",
            description = "blocks each engine's prefix cache holds, LRU (default: ${DEFAULT-VALUE})")
    int cacheBlocks;

    @Option(
            names = "--time-scale",
            paramLabel = "S",
            defaultValue = "1",
            description = "wall seconds per engine second: 0.1 runs ten times faster (default: ${DEFAULT-VALUE})")
    double timeScale;

    @Option(
            names = "--prefill-us-per-token",
            paramLabel = "X",
            defaultValue = "100",
            description = "prefill time per uncached prompt token, microseconds (default: ${DEFAULT-VALUE})")
    double prefillUs;

    @Option(
            names = "--decode-us-per-token",
            paramLabel = "Y",
            defaultValue = "20000",
            description = "decode step time per output token, microseconds (default: ${DEFAULT-VALUE})")
    double decodeUs;

    @Option(
            names = "--max-num-seqs",
            paramLabel = "N",
            defaultValue = "256",
            description = "most requests running at once per engine, as vLLM's flag (default: ${DEFAULT-VALUE})")
    int maxNumSeqs;

    @Option(
            names = "--max-num-batched-tokens",
            paramLabel = "TOKENS",
            defaultValue = "2048",
            description = "token budget of one engine step, as vLLM's flag (default: ${DEFAULT-VALUE})")
    int maxNumBatchedTokens;

    @Option(
            names = "--enable-prompt-tokens-details",
            description = "report usage.prompt_tokens_details.cached_tokens, as vLLM's flag of that name")
    boolean promptTokensDetails;

    @Option(
            names = "--seed",
            paramLabel = "N",
            defaultValue = "0",
            description = "the seed of the output tokens (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(
            names = "--event-encoding",
            paramLabel = "map|array",
            defaultValue = "map",
            description =
                    "KV events as tagged maps (vLLM since PR #42892) or arrays (before) (default: ${DEFAULT-VALUE})")
    String encoding;

    @Option(
            names = "--replay-buffer",
            paramLabel = "BATCHES",
            defaultValue = "10000",
            description = "batches each engine keeps for replay (default: ${DEFAULT-VALUE})")
    int replayBuffer;

    @Override
    public Integer call() throws Exception {
        StandinSettings settings = StandinSettings.builder()
                .engines(engines)
                .firstWorker(workerId)
                .host(host)
                .ports(port, eventsPort, replayPort)
                .model(model)
                .tokenizer(tokenizer)
                .maxModelLen(maxModelLen)
                .blockSize(blockSize)
                .cacheBlocks(cacheBlocks)
                .timeScale(timeScale)
                .speeds(prefillUs, decodeUs)
                .limits(maxNumSeqs, maxNumBatchedTokens)
                .promptTokensDetails(promptTokensDetails)
                .seed(seed)
                .encoding(encoding)
                .replayBuffer(replayBuffer)
                .build();
        Standin.run(settings, System.out);
        return 0;
    }
}
