package io.kvprefix.zmq;

import java.util.List;

/**
 * Turns the payload of one batch of an engine's KV events into kvprefix {@link io.kvprefix.KvEvent}s
 * for that engine, with what was skipped or noted: a {@link DecodedBatch}. The
 * {@link KvEventSubscriber} makes one decoder per engine ({@link #forEngine}, by the engine's
 * {@link EngineEndpoint#format() format}), hands it each batch's payload in sequence order and
 * applies what comes back; a router that receives payloads some other way can use a decoder directly.
 * A decoder sees payloads only: framing, sequence numbers and replay are the transport's, and the
 * worker comes from the engine's configuration. The formats ({@code vllm}, {@code sglang},
 * {@code trtllm}) are docs/ENGINES.md sections 1 to 3; {@code vllm-copies} is {@code vllm} honouring
 * the unmerged {@code remaining_copy_counts} (docs/ENGINES.md section 1.1).
 *
 * <p>Problems with the payload as a whole throw {@link BatchDecodeException}; problems with single
 * events are {@link DecodedBatch.Issue}s, and the rest of the batch is still applied. A decoder never
 * throws anything else for any input.
 *
 * <p>Thread-safety: a decoder may keep state about its engine and need not be thread-safe; use one
 * per engine, from one thread at a time.
 */
public interface EngineEventDecoder {
    /** The format of an engine whose format is not given. */
    String DEFAULT_FORMAT = "vllm";

    /** The formats there is a decoder for, by the names {@link EngineEndpoint#format()} takes. */
    List<String> FORMATS = List.of("vllm", "sglang", "trtllm", "vllm-copies");

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
            case "vllm-copies" -> new VllmEventDecoder(engine, true);
            case "sglang" -> new SglangEventDecoder(engine);
            case "trtllm" -> new TrtllmEventDecoder(engine);
            default ->
                throw new IllegalArgumentException(
                        "unknown format '" + engine.format() + "' (known formats: " + String.join(", ", FORMATS) + ")");
        };
    }
}
