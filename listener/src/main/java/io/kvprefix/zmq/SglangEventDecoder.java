package io.kvprefix.zmq;

/**
 * The {@code sglang} format of {@link EngineEventDecoder}: SGLang's own KV-event publisher, which
 * speaks vLLM's ZMQ framing with a layout of its own (the attention dp rank, the salt at position 7
 * or as a map key, {@code component_type}, HiCache's media). The reader behind both formats accepts
 * the union of the two layouts, as Dynamo's does, so this decoder is vLLM's reading under SGLang's
 * name; docs/ENGINES.md section 2 has every field and the SGLang source it was read from.
 *
 * <p>Thread-safety: not thread-safe (it learns group kinds as it goes); one per engine.
 */
public final class SglangEventDecoder implements EngineEventDecoder {
    private final VllmEventDecoder reader;

    /** A decoder for the events of {@code engine}. */
    public SglangEventDecoder(EngineEndpoint engine) {
        this.reader = new VllmEventDecoder(engine);
    }

    @Override
    public DecodedBatch decode(byte[] payload) throws BatchDecodeException {
        return reader.decode(payload);
    }
}
