/**
 * How the subscriber works inside: one I/O thread ({@link io.kvprefix.zmq.internal.SubscriberLoop})
 * polls every engine's sockets; per engine, an {@link io.kvprefix.zmq.internal.EngineSession} owns the
 * SUB and DEALER (replay) sockets and hands each framed batch to
 * {@link io.kvprefix.zmq.internal.EngineSync}, the per-engine sequence state machine (its rules for
 * order, gaps, replays, duplicates, restarts and late joins are stated in its class comment), which
 * decides what to apply, what to ask the engine's replay socket for, and when a range is lost and
 * the worker must be cleared. {@link io.kvprefix.zmq.internal.WireReader} decodes the msgpack payload
 * of one batch (array and map encodings) into {@link io.kvprefix.zmq.internal.WireBatch}; counters
 * live in {@link io.kvprefix.zmq.internal.EngineCounters}. Where each engine's stream stood at a
 * snapshot (its last applied batch, the ranks it fed) is kept in the snapshot's metadata by
 * {@link io.kvprefix.zmq.internal.EnginePositions}, and a restored subscriber resumes from it
 * ({@code EngineSync.resume}).
 */
package io.kvprefix.zmq.internal;
