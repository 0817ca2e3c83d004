/**
 * How the fleet works inside. The relay: {@link io.kvprefix.nats.internal.Outbox} per engine (the
 * records queued by the listener's {@code BatchTap}, the one frame in flight, its resend with the
 * same id), {@link io.kvprefix.nats.internal.RelayLoop} (the thread that publishes each engine's next
 * frame asynchronously and settles acks). The replica: {@link io.kvprefix.nats.internal.ReplicaCore}
 * (stream order, retention gaps and resyncs, one message applied at a time under a lock a snapshot
 * can take), {@link io.kvprefix.nats.internal.EngineFeed} per engine (record numbers, decoding,
 * applying, counters), {@link io.kvprefix.nats.internal.LagHistogram}. Both sides share
 * {@link io.kvprefix.nats.internal.Frames}, the message format of docs/SPEC.md section 9.2.
 */
package io.kvprefix.nats.internal;
