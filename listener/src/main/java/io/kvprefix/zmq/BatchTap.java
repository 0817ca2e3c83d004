package io.kvprefix.zmq;

/**
 * What a {@link KvEventSubscriber} built with {@link KvEventSubscriber#builder(BatchTap)} does with
 * each engine's stream instead of applying it to an index: it is handed every batch in the order a
 * subscriber applies them (sequence order, gaps filled by replay, duplicates dropped), as the
 * engine's own payload bytes, and told when the engine's workers must be cleared (a range was lost
 * for good, or the engine restarted). A relay that republishes an engine's stream elsewhere (the
 * {@code kvprefix-nats} module) is one.
 *
 * <p>Thread-safety: both methods are called on the subscriber's I/O thread, one call at a time, in
 * order per engine; they should return quickly (while they run, no socket is read).
 */
public interface BatchTap {
    /** Batch {@code seq} of {@code engine}, whose payload is {@code payload} (the tap may keep the array). */
    void batch(EngineEndpoint engine, long seq, byte[] payload);

    /**
     * The workers {@code engine} fed must be cleared here, between the batch handed before and the
     * next one: a range of its batches was lost for good, or it restarted.
     */
    void cleared(EngineEndpoint engine);
}
