package io.kvprefix.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizerOptions;
import io.kvprefix.tokenizer.Tokenizers;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The tokenizer's cost per request (docs/TOKENIZER.md section 8), on Qwen3's real files from the
 * tokenizer tests' npm cache ({@code -p model=DIR} to use another folder):
 *
 * <ul>
 *   <li>{@code promptCold} and {@code promptWarm}: a chat body whose one user message renders to
 *       {@code tokens} tokens, without the segment cache and with it (the same body again: every
 *       piece cached); tokens per second is {@code tokens} divided by the time per call;
 *   <li>{@code tenthTurnWhole} and {@code tenthTurnCached}: the 10th turn of a 10-turn conversation
 *       (about 600 new tokens a turn) whose last user message is new at every call, tokenized whole
 *       and with turns 1 to 9 already in the segment cache (target: at least 5x faster);
 *   <li>{@code renderRoundTrip}: {@code render} mode against a renderer on 127.0.0.1 that answers in
 *       vLLM's {@code GenerateRequest} shape with the ids of a 1k-token conversation.
 * </ul>
 *
 * <p>{@code tokens} sizes only the prompt benchmarks; run the others with one value of it.
 *
 * <p>{@link #setup()} checks every answer before anything is measured: cached and uncached ids equal
 * for the prompt and for the 10th turn, and the renderer's ids equal local mode's.
 *
 * <p>Thread-safety: JMH state for one benchmark thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class TokenizerBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] WORDS = ("the router sends each request to the engine that holds its prefix in the "
                    + "cache of blocks and tokens while latency matters more than anything for a long conversation "
                    + "with code 123 456 and names like José, Zürich, 東京 and emoji 😀")
            .split(" ");

    @Param({"1024", "8192", "32768"})
    public int tokens;

    @Param({""})
    public String model;

    PromptTokenizer cold;
    PromptTokenizer warm;
    PromptTokenizer render;
    HttpServer renderer;
    ObjectNode prompt;
    ObjectNode renderBody;
    ArrayNode conversation;
    SplittableRandom rnd = new SplittableRandom(10);
    long counter;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        Path dir = model.isEmpty() ? defaultModel() : Path.of(model);
        if (!Files.isRegularFile(dir.resolve("tokenizer.json"))) {
            throw new IllegalStateException(dir + " has no tokenizer.json: run ./kvprefix setup (it fetches"
                    + " the tokenizer test data), or pass -p model=DIR");
        }
        cold = Tokenizers.open("local:" + dir, TokenizerOptions.defaults().withSegmentCache(0, 0));
        warm = Tokenizers.open("local:" + dir);
        prompt = chat(textOf(tokens));
        check(cold.chat(prompt).tokens(), warm.chat(prompt).tokens(), "the prompt");
        conversation = JSON.createArrayNode();
        conversation.addObject().put("role", "system").put("content", paragraph(80));
        for (int turn = 1; turn < 10; turn++) {
            conversation.addObject().put("role", "user").put("content", paragraph(400));
            warm.chat(withLast(paragraph(400))); // turns 1 to 9 reach the cache as a live conversation's would
            conversation.addObject().put("role", "assistant").put("content", paragraph(200));
        }
        ObjectNode tenth = withLast(paragraph(400));
        check(cold.chat(tenth).tokens(), warm.chat(tenth).tokens(), "the 10th turn");
        startRenderer(dir);
    }

    private static Path defaultModel() {
        String env = System.getenv("KVPREFIX_TOKENIZER_CACHE");
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = env != null && !env.isEmpty()
                ? Path.of(env)
                : (xdg != null && !xdg.isEmpty() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache"))
                        .resolve("kvprefix/npm");
        return cache.resolve("models/qwen3");
    }

    private static void check(int[] a, int[] b, String what) {
        if (!Arrays.equals(a, b)) {
            throw new IllegalStateException(what + ": the segment cache's ids differ from whole-text ids");
        }
    }

    private void startRenderer(Path dir) throws IOException, TokenizeException {
        renderBody = chat(textOf(1024));
        ObjectNode reply = JSON.createObjectNode().put("request_id", "bench");
        ArrayNode ids = reply.putArray("token_ids");
        int[] expected = cold.chat(renderBody).tokens();
        Arrays.stream(expected).forEach(ids::add);
        reply.putNull("features");
        reply.putObject("sampling_params").put("max_tokens", 16);
        byte[] bytes = reply.toString().getBytes(StandardCharsets.UTF_8);
        renderer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        renderer.createContext("/v1/chat/completions/render", x -> {
            x.getRequestBody().readAllBytes();
            x.getResponseHeaders().add("Content-Type", "application/json");
            x.sendResponseHeaders(200, bytes.length);
            x.getResponseBody().write(bytes);
            x.close();
        });
        renderer.start();
        render = Tokenizers.open(
                "render:http://127.0.0.1:" + renderer.getAddress().getPort());
        if (!Arrays.equals(expected, render.chat(renderBody).tokens())) {
            throw new IllegalStateException("the renderer's ids differ from local mode's");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        cold.close();
        warm.close();
        render.close();
        renderer.stop(0);
    }

    private static ObjectNode chat(String content) {
        ObjectNode b = JSON.createObjectNode();
        b.putArray("messages").addObject().put("role", "user").put("content", content);
        return b;
    }

    private ObjectNode withLast(String content) {
        ObjectNode b = JSON.createObjectNode();
        ArrayNode m = b.putArray("messages");
        m.addAll(conversation);
        m.addObject().put("role", "user").put("content", content);
        return b;
    }

    /** A text of about {@code n} tokens (a word of these is about 1.3 Qwen3 tokens). */
    private String textOf(int n) {
        return paragraph(n * 10 / 13);
    }

    private String paragraph(int words) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < words; i++) {
            b.append(i % 17 == 16 ? ".\n" : " ").append(WORDS[rnd.nextInt(WORDS.length)]);
        }
        return b.toString();
    }

    @Benchmark
    public int[] promptCold() throws TokenizeException {
        return cold.chat(prompt).tokens();
    }

    @Benchmark
    public int[] promptWarm() throws TokenizeException {
        return warm.chat(prompt).tokens();
    }

    @Benchmark
    public int[] tenthTurnWhole() throws TokenizeException {
        return cold.chat(withLast(newTurn())).tokens();
    }

    @Benchmark
    public int[] tenthTurnCached() throws TokenizeException {
        return warm.chat(withLast(newTurn())).tokens();
    }

    @Benchmark
    public int[] renderRoundTrip() throws TokenizeException {
        return render.chat(renderBody).tokens();
    }

    /** A last user message of about 400 words that no call has sent before. */
    private String newTurn() {
        return (counter++) + paragraph(400);
    }
}
