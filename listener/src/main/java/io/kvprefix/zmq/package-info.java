/**
 * Feeding a kvprefix index from real engines: vLLM / SGLang KV events over ZMQ.
 *
 * <ul>
 *   <li>{@link io.kvprefix.zmq.KvEventSubscriber}: subscribes to engines, applies their events in
 *       sequence order, recovers gaps through the engines' replay sockets, resyncs when it cannot.
 *   <li>{@link io.kvprefix.zmq.EngineEndpoint}: one engine (endpoint, worker id, dp rank, replay
 *       endpoint, topic, format).
 *   <li>{@link io.kvprefix.zmq.SubscriberStats}: counters per engine and in total, as JSON too.
 *   <li>{@link io.kvprefix.zmq.BatchTap}: what a subscriber that feeds no index hands each engine's
 *       batches to, in the order it would apply them (a relay republishes them elsewhere);
 *       {@link io.kvprefix.zmq.ResumePoint}: where an engine's stream was left, to take it up there
 *       (a restored index's engines resume so, from the positions {@code KvEventSubscriber.snapshot}
 *       keeps in the snapshot: {@code Builder.resumeFrom}, docs/SNAPSHOT.md section 6).
 *   <li>{@link io.kvprefix.zmq.EngineEventDecoder}: one batch payload in, the events to apply and the
 *       issues out ({@link io.kvprefix.zmq.DecodedBatch}); {@link io.kvprefix.zmq.VllmEventDecoder} is
 *       the {@code vllm} format, for routers that receive vLLM payloads some other way too.
 * </ul>
 *
 * <p><b>Formats.</b> An engine's format picks its decoder. The decoder knows the payload's layout and
 * nothing else: the ZMQ framing, the sequence numbers and the replay protocol are the subscriber's,
 * and the worker comes from the engine's configuration. So a format with the same framing and another
 * layout (SGLang) is one more decoder, and a format that does not come over ZMQ at all (TensorRT-LLM's
 * JSON event dicts, from a file or standard input) is a decoder plus a reader of lines that feeds it.
 * {@link io.kvprefix.zmq.EngineEventDecoder#FORMATS} lists the formats there is a decoder for; an engine
 * naming another is refused when it is configured, with a message naming the known ones.
 *
 * <p>This module depends on JeroMQ (pure-Java ZMQ) and msgpack-core; the core library
 * ({@code io.kvprefix}) does not. Everything under {@code io.kvprefix.zmq.internal} is an
 * implementation detail, and the module descriptor ({@code module io.kvprefix.zmq}) exports this
 * package alone; it requires msgpack-core by its derived automatic name, {@code msgpack.core}, since
 * that jar declares none.
 */
package io.kvprefix.zmq;
