package io.kvprefix.zmq;

import java.util.List;

/**
 * Turns the payload of one batch of an engine's KV events into kvprefix {@link io.kvprefix.KvEvent}s
 * for that engine, with what was skipped or noted: a {@link DecodedBatch}. The
 * {@link KvEventSubscriber} makes one decoder per engine ({@link #forEngine}, by the engine's
 * {@link EngineEndpoint#format() format}), hands it each batch's payload in sequence order and
 * applies what comes back; a router that receives payloads some other way can use a decoder directly.
 *
 * <p>A decoder sees payloads only. Framing (topics, sequence numbers, the replay protocol) is the
 * transport's business, and which worker a batch belongs to comes from the engine's configuration
 * ({@link EngineEndpoint#worker}) and, where the format has one, the batch's dp rank. That is the
 * line the formats kvprefix reads, or will, divide along:
 *
 * <ul>
 *   <li>{@code vllm} ({@link VllmEventDecoder}): the msgpack payload frame of one ZMQ message, a
 *       batch {@code [ts, [events...], dp_rank?]} of {@code BlockStored} / {@code BlockRemoved} /
 *       {@code AllBlocksCleared} events.
 *   <li>{@code sglang} ({@link SglangEventDecoder}): SGLang publishes over the same ZMQ framing with
 *       its own field layout; the subscriber stays as it is.
 *   <li>{@code trtllm} ({@link TrtllmEventDecoder}): TensorRT-LLM hands out JSON dicts
 *       ({@code get_kv_cache_events()}) that a router reads from a file or standard input, not from
 *       ZMQ: its decoder takes one UTF-8 JSON line (one event, or a list of them) as the payload, and
 *       a reader of lines ({@code kvprefix listen --trtllm-events}), not the ZMQ subscriber, feeds it.
 * </ul>
 *
 * <p>Problems with the payload as a whole throw {@link BatchDecodeException}; problems with single
 * events are {@link DecodedBatch.Issue}s, and the rest of the batch is still applied. A decoder never
 * throws anything else for any input.
 *
 * <p>Thread-safety: a decoder may keep state about its engine (vLLM's learns the kinds of KV-cache
 * groups) and need not be thread-safe; use one per engine, from one thread at a time.
 */
public interface EngineEventDecoder {
    /** The format of an engine whose format is not given. */
    String DEFAULT_FORMAT = "vllm";

    /** The formats there is a decoder for, by the names {@link EngineEndpoint#format()} takes. */
    List<String> FORMATS = List.of("vllm", "sglang", "trtllm");

    /**
     * The events of one batch payload, in order, with what was skipped or noted.
     *
     * @throws BatchDecodeException if the payload as a whole is unreadable
     */
    DecodedBatch decode(byte[] payload) throws BatchDecodeException;

    /** A new decoder for {@code engine}'s format, for that engine's events alone. */
    static EngineEventDecoder forEngine(EngineEndpoint engine) {
        return switch (engine.format()) {
            case "vllm" -> new VllmEventDecoder(engine);
            case "sglang" -> new SglangEventDecoder(engine);
            case "trtllm" -> new TrtllmEventDecoder(engine);
            default ->
                throw new IllegalArgumentException(
                        "unknown format '" + engine.format() + "' (known formats: " + String.join(", ", FORMATS) + ")");
        };
    }
}
