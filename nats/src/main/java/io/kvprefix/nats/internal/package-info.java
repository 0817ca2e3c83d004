/**
 * How the fleet works inside. The relay: {@link io.kvprefix.nats.internal.Outbox} per engine (the
 * records queued by the listener's {@code BatchTap}, the one frame in flight, its resend with the
 * same id), {@link io.kvprefix.nats.internal.RelayLoop} (the thread that publishes each engine's next
 * frame asynchronously and settles acks). The replica: {@link io.kvprefix.nats.internal.ReplicaCore}
 * (stream order, retention gaps and resyncs, one message applied at a time under a lock a snapshot
 * can take), {@link io.kvprefix.nats.internal.EngineFeed} per engine (record numbers, decoding,
 * applying, counters), {@link io.kvprefix.nats.internal.LagHistogram}; its snapshots:
 * {@link io.kvprefix.nats.internal.ReplicaSnapshots} (cut, save, upload; bootstrap from the newest),
 * {@link io.kvprefix.nats.internal.SnapshotBucket} (the object store bucket),
 * {@link io.kvprefix.nats.internal.ReplicaImage} (the replica's state as the snapshot's metadata
 * strings) and {@link io.kvprefix.nats.internal.IndexSnapshots} (the index's own snapshot file,
 * docs/SNAPSHOT.md). Both sides share
 * {@link io.kvprefix.nats.internal.Frames}, the message format of docs/FLEET.md section 2. A Dynamo
 * source: {@link io.kvprefix.nats.internal.DynamoTree} (JSON or MessagePack to one tree),
 * {@link io.kvprefix.nats.internal.DynamoEvents} (the envelope and {@code RouterEvent} read from it,
 * mapped onto kvprefix's events), {@link io.kvprefix.nats.internal.DynamoCore} (publishers,
 * sequences, restarts, counters; docs/ENGINES.md section 4.4).
 */
package io.kvprefix.nats.internal;
