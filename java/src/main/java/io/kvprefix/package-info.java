/**
 * kvprefix's public API: a KV-cache-aware prefix index and router for Java LLM routers.
 *
 * <p><b>The pieces.</b> A {@link io.kvprefix.PrefixIndex} holds which KV blocks every worker has
 * cached, fed by the engines' {@link io.kvprefix.KvEvent}s (directly or through an
 * {@link io.kvprefix.EventSink}); {@link io.kvprefix.PrefixIndex#match(int[])} answers, per worker,
 * how many leading blocks of a request it holds ({@link io.kvprefix.MatchResult}), hashing the
 * request's tokens with a {@link io.kvprefix.BlockHasher} (bit-compatible with NVIDIA Dynamo) in
 * the same call. A {@link io.kvprefix.Router} turns that answer and its own load accounting into a
 * {@link io.kvprefix.RoutingDecision} with one of the {@link io.kvprefix.RoutingPolicy}s (NVIDIA
 * Dynamo's by default; SGLang's gateway's, llm-d's and kvprefix's own least estimated time to first
 * token by name, docs/SPEC.md section 6). {@link io.kvprefix.IndexConfig} sets an index up and
 * {@link io.kvprefix.Implementation} chooses between the native library and pure Java, which give
 * identical answers.
 *
 * <p><b>Semantics</b> (docs/SPEC.md sections 3 and 4). The depth of a worker is the largest
 * {@code k} such that for every {@code i < k} the worker holds a block at position {@code i} whose
 * chain hash is the request's chain hash at {@code i}. This is exact under everything the events
 * allow: chunk-hash collisions, removed middle blocks (their descendants stay held but cannot match
 * until the gap is stored again), re-stored blocks, one block under several engine hashes, and
 * engine hash schemes unrelated to kvprefix's. Every event is applied whole or not at all and
 * answers an {@link io.kvprefix.EventStatus}.
 *
 * <p><b>Threads.</b> Matches run on the caller's thread, lock-free on the off-heap index, and may
 * overlap writes: each worker's depth is then one that held at some moment of the call, or between
 * two such depths. Writes for different worker ids may run concurrently.
 *
 * <p><b>Snapshots</b> (docs/SNAPSHOT.md). {@link io.kvprefix.PrefixIndex#snapshot} saves an index's
 * whole state to one file while matches go on, and {@link io.kvprefix.PrefixIndex#restore} builds an
 * index that answers exactly like the saved one, in bulk, without applying an event again; a file
 * that cannot be restored is refused whole with a {@link io.kvprefix.SnapshotException}.
 *
 * <p>Everything under {@code io.kvprefix.internal} is an implementation detail the module does not
 * export.
 */
package io.kvprefix;
