/**
 * A router fleet on NATS JetStream: several replicas, one index (docs/FLEET.md).
 *
 * <ul>
 *   <li>{@link io.kvprefix.nats.EventRelay}: reads engines as {@code kvprefix listen} does and
 *       publishes every engine's batches, in order and once each, to the fleet's stream;
 *       {@link io.kvprefix.nats.RelayStats} its counters.
 *   <li>{@link io.kvprefix.nats.StreamReplica}: applies the stream, in order, to a
 *       {@link io.kvprefix.PrefixIndex}; {@link io.kvprefix.nats.ReplicaStats} its counters, with the
 *       stream sequence applied and the lag from engine publish to replica apply.
 *   <li>{@link io.kvprefix.nats.IndexImages}: how a replica saves and restores its index for the
 *       snapshots it publishes to, and starts from, the stream's object store bucket.
 *   <li>{@link io.kvprefix.nats.FleetStream}: the stream's name, retention and de-duplication
 *       window, and the subject of each engine; {@link io.kvprefix.nats.FleetConnection} a connection
 *       that reconnects forever.
 *   <li>{@link io.kvprefix.nats.DynamoSource}: feeds an index from a running NVIDIA Dynamo
 *       deployment's KV events (its JetStream durable stream or its core event plane), read-only;
 *       {@link io.kvprefix.nats.DynamoStats} its counters (docs/ENGINES.md section 4).
 * </ul>
 *
 * <p><b>Design.</b> The stream carries the engines' own payload bytes, not decoded events: the relay
 * needs no index and decodes nothing, every replica decodes with the same code as {@code listen}, and
 * a new decoder (another engine format) changes no message. One subject per engine keeps an engine's
 * batches in order in the stream and makes "where did the relay stop" one "last message by subject"
 * lookup. The relay keeps exactly one frame (a run of consecutive batches) in flight per engine and
 * sends it again with the same {@code Nats-Msg-Id} until it is acknowledged: with several frames in
 * flight, a connection lost mid-way can land frame n+1 without frame n, and a relay that then
 * restarts from "the last message" would skip n for good; with one, the stream never has such a hole,
 * and coalescing what queued meanwhile into the next frame keeps throughput up (a frame per round
 * trip, not a batch per round trip). Records are numbered per engine, so a replica drops a repeated
 * frame (one republished after the de-duplication window) by its number, and the message id is the
 * engine's key and first record number, stable across relay restarts. Replicas read with jnats'
 * ordered consumer (ephemeral, recreated from the next sequence after a disconnection); a stream
 * sequence that jumps means the stream's retention dropped messages the replica never read, and the
 * replica resyncs (every engine's workers cleared), as the listener does when an engine's replay
 * buffer has moved on.
 *
 * <p><b>Dynamo.</b> A Dynamo deployment is read where its routers read it, with nothing kvprefix
 * owns on the server: an ordered consumer (ephemeral) on the durable stream, so Dynamo's purge to
 * its routers' acknowledgements is never held back, or a plain subscription to the event plane's
 * subjects. Both encodings (JSON, named MessagePack) become one tree first, so one reader maps
 * Dynamo's serde shapes onto kvprefix's events; whatever Dynamo would recover over its request
 * plane (a gap, a restart) clears the worker instead, as the listener does with a range an engine
 * can no longer replay.
 *
 * <p><b>Threads.</b> In a relay, the listener's I/O thread queues records; one thread of the relay's
 * ({@code kvprefix-nats-relay-N}) publishes them; jnats' own threads complete the acks. While the
 * server is away, records queue (up to {@code EventRelay.Builder.maxQueuedRecords} per engine, then
 * the I/O thread waits, ZMQ queues and, past its high-water mark, drops: gaps the replay fills
 * later). In a replica, jnats' dispatcher thread applies the messages (so never concurrently for one
 * worker) while any thread matches. Closing either stops its own threads; neither closes the
 * connection, and a replica does not close its index.
 *
 * <p><b>Server.</b> Debian's {@code nats-server} 2.9.10 has everything used here (de-duplication
 * window, {@code Nats-Expected-Stream}, last-by-subject message get, ordered consumers over pull
 * requests with heartbeats, the object store); nothing needs 2.10. The Java client is
 * {@code io.nats:jnats}; this package's API takes its {@code Connection}, so an application can share
 * its own. Everything under {@code io.kvprefix.nats.internal} is an implementation detail.
 */
package io.kvprefix.nats;
