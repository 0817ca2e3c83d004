package io.kvprefix;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The rule {@link CitationsTest} holds documents and javadoc to: a Java name written as code names
 * something the code has.
 *
 * <p>A <em>name</em> is a code span, a backticked span in a document or a {@code {@code ...}} in
 * javadoc, that is exactly a type, optionally followed by nested types and one member:
 * {@code Type}, {@code Type.Nested}, {@code Type.member}, {@code Type#member}, {@code Type.CONSTANT},
 * each optionally with an argument list ({@code Type.member(a, b)}). A type part is an upper-case
 * letter, a lower-case letter or digit, then word characters ({@code PrefixIndex}, {@code Worker});
 * so {@code GPU}, {@code XXH3}, {@code Nats-Msg-Id}, {@code Map<K, V>} and lower-case spans are not
 * names. A name resolves if its type is declared in the repository's Java sources (main or test, any
 * module) or in the JDK, its nested types are declared in the same file (or the JDK class), and its
 * member is a method, field, constant, record component or enum constant declared there; or if its
 * first type is on {@link #EXTERNAL}, the names of other projects that the documents discuss.
 *
 * <p>Thread-safety: immutable after construction.
 */
final class JavaNames {
    /** Other projects' names that documents and javadoc use, each with whose it is. */
    static final Map<String, String> EXTERNAL = Map.ofEntries(
            Map.entry("PositionalIndexer", "NVIDIA Dynamo's Rust indexer, the Flash Indexer"),
            Map.entry("DashMap", "the Rust crate the yardstick's index is built on"),
            Map.entry("BlockStored", "vLLM's and SGLang's KV event"),
            Map.entry("BlockRemoved", "vLLM's and SGLang's KV event"),
            Map.entry("AllBlocksCleared", "vLLM's and SGLang's KV event"),
            Map.entry("BlockStoredWithMetadata", "SGLang's salted KV event"),
            Map.entry("BlockStoredPositionSeven", "Dynamo's decoder of SGLang's salted event"),
            Map.entry("StorageMedium", "SGLang's media"),
            Map.entry("ZmqEventPublisher", "vLLM's KV-event publisher"),
            Map.entry("EngineArgs", "vLLM's engine arguments"),
            Map.entry("KVCacheEventSerializer", "TensorRT-LLM's event serialiser"),
            Map.entry("RouterEvent", "NVIDIA Dynamo's KV event"),
            Map.entry("Device", "Dynamo's name of the GPU medium"),
            Map.entry("Connection", "jnats"),
            Map.entry("MeterRegistry", "Micrometer"),
            Map.entry("MeterBinder", "Micrometer"),
            Map.entry("Long2ObjectOpenHashMap", "fastutil"),
            Map.entry("True", "Python's literal, in the op-stream format's list of what is not JSON"),
            Map.entry("NaN", "a JavaScript literal that is not JSON"),
            Map.entry("Infinity", "a JavaScript literal that is not JSON"),
            Map.entry("Match", "the op-stream format's example of an op in the wrong case"),
            // vLLM's OpenAI-server models, which the stand-in engine and the tokenizer's render mode speak
            Map.entry("CompletionRequest", "vLLM's OpenAI request model"),
            Map.entry("ChatCompletionRequest", "vLLM's OpenAI request model"),
            Map.entry("CompletionResponse", "vLLM's OpenAI response model"),
            Map.entry("CompletionStreamResponse", "vLLM's OpenAI response model"),
            Map.entry("ChatCompletionResponse", "vLLM's OpenAI response model"),
            Map.entry("ChatCompletionStreamResponse", "vLLM's OpenAI response model"),
            Map.entry("ChatCompletionToolsParam", "vLLM's OpenAI request model"),
            Map.entry("GenerateRequest", "vLLM's tokens-in request model (render, /inference/v1/generate)"),
            Map.entry("GenerateResponse", "vLLM's tokens-out response model"),
            Map.entry("GenerateStreamResponse", "vLLM's tokens-out response model"),
            Map.entry("TokenizeResponse", "vLLM's /tokenize response model"),
            Map.entry("ModelList", "vLLM's /v1/models response model"),
            Map.entry("ModelCard", "vLLM's /v1/models response model"),
            Map.entry("ModelPermission", "vLLM's /v1/models response model"),
            Map.entry("UsageInfo", "vLLM's usage model"),
            Map.entry("ErrorResponse", "vLLM's error body"),
            Map.entry("NotFoundError", "vLLM's error type"),
            Map.entry("BadRequestError", "vLLM's error type"),
            Map.entry("InternalServerError", "vLLM's error type"),
            Map.entry("OpenAIBaseModel", "vLLM's base of its request and response models"),
            Map.entry("ServingRender", "vLLM's render server"),
            Map.entry("SamplingParams", "vLLM's sampling parameters"),
            // what the tokenizer module reads for facts: DJL, HuggingFace, Python's Jinja
            Map.entry("Utils", "DJL's utilities (its offline switch)"),
            Map.entry("Ec2Utils", "DJL's usage ping"),
            Map.entry("AutoTokenizer", "HuggingFace transformers"),
            Map.entry("AssistantTracker", "HuggingFace transformers' chat-template extension"),
            Map.entry("ImmutableSandboxedEnvironment", "Python Jinja2's sandbox"),
            Map.entry("HttpClient", "the JDK's java.net.http client (or Vert.x's)"),
            // NVIDIA Dynamo's event plane and KV-event types, which listen --dynamo reads (docs/ENGINES.md section 4)
            Map.entry("EventEnvelope", "NVIDIA Dynamo's event-plane envelope"),
            Map.entry("KvCacheEvent", "NVIDIA Dynamo's KV event inside a RouterEvent"),
            Map.entry("KvCacheEventData", "NVIDIA Dynamo's stored/removed/cleared enum"),
            Map.entry("KvCacheStoreData", "NVIDIA Dynamo's store payload"),
            Map.entry("StorageTier", "NVIDIA Dynamo's tier enum"),
            Map.entry("NatsQueue", "NVIDIA Dynamo's JetStream queue"),
            Map.entry("WorkerQueryClient", "NVIDIA Dynamo's router-side recovery client"),
            // epp: Envoy's ext_proc Java API (io.envoyproxy.controlplane:api) and GIE's resources
            Map.entry("ExternalProcessorGrpc", "Envoy's ext_proc gRPC stub (io.envoyproxy.controlplane:api)"),
            Map.entry("ExternalProcessor", "Envoy's ext_proc gRPC service"),
            Map.entry("ImmediateResponse", "Envoy's ext_proc answer that the data plane sends the client"),
            Map.entry("InferencePool", "the Gateway API Inference Extension's resource"),
            // Spring Cloud Gateway's names (docs/SPRING.md), and the filter name its routes give kvprefix's factory
            Map.entry("KvAwareRouting", "a Spring Cloud Gateway route's name for KvAwareRoutingGatewayFilterFactory"),
            Map.entry("NettyRoutingFilter", "Spring Cloud Gateway's HTTP client filter"),
            Map.entry("NettyWriteResponseFilter", "Spring Cloud Gateway's response writer"),
            Map.entry("RouteToRequestUrlFilter", "Spring Cloud Gateway's route-to-URL filter"),
            Map.entry("ReactiveLoadBalancerClientFilter", "Spring Cloud Gateway's load-balancer filter"),
            Map.entry("RoundRobinLoadBalancer", "Spring Cloud LoadBalancer's default"),
            Map.entry("None", "Python's literal"));

    private static final List<String> JDK_PACKAGES = List.of(
            "java.lang",
            "java.lang.foreign",
            "java.lang.invoke",
            "java.lang.ref",
            "java.lang.reflect",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "java.util.concurrent.locks",
            "java.util.function",
            "java.util.stream",
            "java.util.zip",
            "java.io",
            "java.math",
            "java.net",
            "java.net.http",
            "java.nio",
            "java.nio.channels",
            "java.nio.charset",
            "java.nio.file",
            "java.time");
    /** What every class, enum or record has without declaring it (an enum's {@code values} too). */
    private static final List<Class<?>> INHERITED = List.of(Object.class, Enum.class, Record.class);

    private static final String TYPE_PART = "[A-Z][a-z0-9]\\w*";
    private static final Pattern NAME = Pattern.compile(
            "(" + TYPE_PART + "(?:\\." + TYPE_PART + ")*)(?:[.#]([a-z_]\\w*|[A-Z][A-Z0-9_]*))?(?:\\(.*\\))?");
    /** A type declaration: at the start of a line, after modifiers only (not in a comment or a string). */
    private static final Pattern DECLARATION = Pattern.compile("(?m)^\\s*(?:(?:public|protected|private|static|final"
            + "|abstract|sealed|non-sealed|strictfp)\\s+)*(?:class|interface|record|enum|@interface)\\s+([A-Z]\\w*)");

    /** Source text of each file that declares a type, by simple name. */
    private final Map<String, List<String>> declaring = new HashMap<>();

    JavaNames(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.filter(f -> f.toString().endsWith(".java"))
                    .filter(f ->
                            !f.toString().contains("/target/") && !f.toString().contains("/.git/"))
                    .toList()) {
                String text = Files.readString(p);
                Matcher m = DECLARATION.matcher(text);
                while (m.find()) {
                    declaring
                            .computeIfAbsent(m.group(1), k -> new ArrayList<>())
                            .add(text);
                }
            }
        }
    }

    /** True if {@code span} has the shape of a Java name (see the class comment). */
    static boolean isName(String span) {
        return NAME.matcher(span).matches();
    }

    /** Why {@code span}, a Java name, does not resolve; empty if it does or if it is no name. */
    Optional<String> problem(String span) {
        Matcher m = NAME.matcher(span);
        if (!m.matches()) {
            return Optional.empty();
        }
        String[] types = m.group(1).split("\\.");
        String member = m.group(2);
        if (EXTERNAL.containsKey(types[0])) {
            return Optional.empty();
        }
        List<String> files = declaring.get(types[0]);
        if (files != null) {
            return ours(types, member, files);
        }
        Class<?> c = jdkClass(types);
        if (c == null) {
            return Optional.of("no type " + String.join(".", types) + " in the sources or the JDK");
        }
        return member == null || jdkHas(c, member)
                ? Optional.empty()
                : Optional.of(c.getName() + " has no member " + member);
    }

    private Optional<String> ours(String[] types, String member, List<String> files) {
        List<String> candidates = files;
        for (int i = 1; i < types.length; i++) {
            Pattern nested = Pattern.compile("\\b(?:class|interface|record|enum)\\s+" + types[i] + "\\b");
            candidates =
                    candidates.stream().filter(t -> nested.matcher(t).find()).toList();
            if (candidates.isEmpty()) {
                return Optional.of("no nested type " + types[i] + " in " + types[0]);
            }
        }
        if (member == null) {
            return Optional.empty();
        }
        Pattern declared = memberDeclaration(member);
        return candidates.stream().anyMatch(t -> declared.matcher(t).find())
                        || INHERITED.stream().anyMatch(c -> jdkHas(c, member))
                        || member.equals("values")
                        || member.equals("valueOf")
                ? Optional.empty()
                : Optional.of(String.join(".", types) + " declares no " + member);
    }

    /** A method, field, constant, record component or enum constant named {@code member}. */
    private static Pattern memberDeclaration(String member) {
        String n = Pattern.quote(member);
        return Pattern.compile("(?m)(?:[\\w>\\]]\\s+" + n + "\\s*[(=;,)])|(?:^\\s*" + n + "\\s*[,;(]|^\\s*" + n
                + "\\s*$)|(?:<[^>]*>\\s+" + n + "\\s*\\()");
    }

    private static Class<?> jdkClass(String[] types) {
        for (String pkg : JDK_PACKAGES) {
            try {
                return Class.forName(pkg + "." + String.join("$", types), false, JavaNames.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                // not in this package
            }
        }
        return null;
    }

    private static boolean jdkHas(Class<?> c, String member) {
        for (Method x : c.getMethods()) {
            if (x.getName().equals(member)) {
                return true;
            }
        }
        for (Field x : c.getFields()) {
            if (x.getName().equals(member)) {
                return true;
            }
        }
        if (c.isRecord()) {
            for (RecordComponent x : c.getRecordComponents()) {
                if (x.getName().equals(member)) {
                    return true;
                }
            }
        }
        return false;
    }
}
