/**
 * Feeding a kvprefix index from real engines: vLLM / SGLang KV events over ZMQ.
 *
 * <ul>
 *   <li>{@link io.kvprefix.zmq.KvEventSubscriber}: subscribes to engines, applies their events in
 *       sequence order, recovers gaps through the engines' replay sockets, resyncs when it cannot.
 *   <li>{@link io.kvprefix.zmq.EngineEndpoint}: one engine (endpoint, worker id, dp rank, replay endpoint).
 *   <li>{@link io.kvprefix.zmq.SubscriberStats}: counters per engine and in total, as JSON too.
 *   <li>{@link io.kvprefix.zmq.VllmEventDecoder}: the wire format alone, for routers that receive vLLM
 *       payloads some other way.
 * </ul>
 *
 * <p>This module depends on JeroMQ (pure-Java ZMQ) and msgpack-core; the core library
 * ({@code io.kvprefix}) does not. Everything under {@code io.kvprefix.zmq.internal} is an
 * implementation detail, and the module descriptor ({@code module io.kvprefix.zmq}) exports this
 * package alone; it requires msgpack-core by its derived automatic name, {@code msgpack.core}, since
 * that jar declares none.
 */
package io.kvprefix.zmq;
