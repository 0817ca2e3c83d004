/**
 * How the subscriber works inside: one I/O thread ({@link io.kvprefix.zmq.internal.SubscriberLoop})
 * polls every engine's sockets; per engine, an {@link io.kvprefix.zmq.internal.EngineSession} owns the
 * SUB socket and its connection monitor and the DEALER (replay) socket, reads the publisher's
 * identity when its frames carry one, and hands each framed batch and each reconnection to
 * {@link io.kvprefix.zmq.internal.EngineSync}, the per-engine sequence state machine (its rules for
 * the start, order, gaps, progress-based replay requests ({@link io.kvprefix.zmq.internal.ReplayAttempt}
 * is one), the anchor check, contradictions, duplicates, restarts and resyncs are docs/LISTENER.md
 * section 3), which decides what to apply, what to ask the engine's replay socket for, and when a
 * range is lost and the worker must be cleared. {@link io.kvprefix.zmq.internal.WireReader} decodes the msgpack payload
 * of one batch (array and map encodings) into {@link io.kvprefix.zmq.internal.WireBatch}; counters
 * live in {@link io.kvprefix.zmq.internal.EngineCounters}. Where each engine's stream stood at a
 * snapshot (its last applied batch, the ranks it fed) is kept in the snapshot's metadata by
 * {@link io.kvprefix.zmq.internal.EnginePositions}, and a restored subscriber resumes from it
 * ({@link io.kvprefix.zmq.internal.EngineSession} starts its {@code EngineSync} at the {@code ResumePoint} it is given).
 * {@link io.kvprefix.zmq.internal.SnapshotSync} is the provisional state machine of vLLM PR #57789's
 * snapshot protocol (docs/LISTENER.md section 8): snapshot, then the live suffix after its resume
 * point, failing closed; {@link io.kvprefix.zmq.internal.SnapshotReply} checks an answer whole first.
 * {@link io.kvprefix.zmq.internal.SnapshotLink} drives it for an engine with a snapshot endpoint: its
 * DEALER to that endpoint, the live batches and idle heartbeats the session hands it, and requests
 * asked again on a new socket when unanswered; such a session's {@code EngineSync} only counts
 * reconnections. {@link io.kvprefix.zmq.internal.PublisherIdentity} reads a publisher's UUID or epoch
 * from its live frames.
 */
package io.kvprefix.zmq.internal;
