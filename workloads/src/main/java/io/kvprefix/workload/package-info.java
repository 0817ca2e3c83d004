/**
 * Workloads: the requests a router faces and the KV events the engines behind it would publish, for
 * everything in the project that needs load without real engines.
 *
 * <ul>
 *   <li>{@link io.kvprefix.workload.Trace} and {@link io.kvprefix.workload.TraceRequest}: requests in
 *       arrival order in the Mooncake model (prompt blocks named by hash ids, 512 tokens per id), with
 *       the transforms of Dynamo's benchmark (split, duplicate, truncate).
 *       {@link io.kvprefix.workload.MooncakeTraceReader} reads a trace file;
 *       {@link io.kvprefix.workload.SyntheticTrace} generates the built-in chat workload from a seed.
 *   <li>{@link io.kvprefix.workload.MockEngine}: one engine's LRU prefix cache, admitting and
 *       releasing requests and emitting the {@code removed} / {@code stored} events vLLM would
 *       ({@link io.kvprefix.workload.AdmitResult}).
 *   <li>{@link io.kvprefix.workload.Workload}: a trace replayed against a set of mock engines, one
 *       {@link io.kvprefix.workload.WorkloadStep} per request (its match, then its engine's events),
 *       and written as an op stream ({@code kvprefix gen-ops}).
 *   <li>{@link io.kvprefix.workload.LocalHashTable} (each hash id's local hash, computed once) and
 *       {@link io.kvprefix.workload.Rng} (a generator whose output no JDK can change), shared by the
 *       above and by the routing simulation.
 * </ul>
 *
 * <p><b>Why a module of its own, below the benchmarks.</b> Three consumers need the same workloads:
 * the JMH suites (a jump-size benchmark over a real trace), the trace-replay benchmark behind
 * {@code kvprefix bench} and {@code sweep}, and the command line ({@code gen-ops}, {@code simulate},
 * {@code demo}). The command line packages the JMH suites into its jar so that {@code kvprefix jmh}
 * finds them, so it depends on the benchmarks; the benchmarks cannot depend back on the command line
 * for the workloads. A module under both removes the cycle that had {@code bench} and {@code cli}
 * importing each other. It depends on the core library, on the op-stream module (a workload is written
 * in that format) and on Jackson's streaming parser (for the trace files), and on nothing that runs
 * a benchmark or a command.
 *
 * <p><b>Determinism.</b> Every random choice goes through {@link io.kvprefix.workload.Rng} and
 * {@link StrictMath}, so the same trace, options and seed give the same requests, the same engine
 * decisions and the same op stream on every JDK and machine: figures in {@code benchmarks/RESULTS.md}
 * and golden expectations in tests can be reproduced.
 *
 * <p><b>Mooncake traces</b> ({@link io.kvprefix.workload.MooncakeTraceReader}). All four fields are
 * required; {@code timestamp} is a non-negative integer number of milliseconds, the lengths
 * non-negative integers up to 2^31-1, {@code hash_ids} an array (possibly empty) of integers in
 * {@code 0 .. 4294967295}: an id names a block of 512 tokens all equal to it (docs/SPEC.md section
 * 2.3), so it must be a 32-bit token value. Other fields ({@code session_id}, ...) are ignored; a
 * field given twice is an error. Blank lines are skipped (but counted, so line numbers match an
 * editor's). Requests are put in arrival order by a stable sort on the timestamp: the Mooncake traces
 * are already in order, and a file that is not still replays in time order, ties kept in file order.
 * {@code input_length} and {@code hash_ids} are not checked against each other: Mooncake has
 * {@code len(hash_ids) == ceil(input_length / 512)}, and a request has
 * {@code min(input_length / 512, len(hash_ids))} full blocks ({@code TraceRequest.fullBlocks}). Lines
 * end with {@code \n} (a {@code \r} before it is ignored); invalid UTF-8 is a malformed line.
 * {@code Trace.split} turns each id {@code h} into the {@code k} sub-ids {@code h*k .. h*k+k-1} of
 * {@code tokensPerBlock / k} tokens each; {@code Trace.duplicate} follows every request with
 * {@code d - 1} copies of itself (same timestamp), copy {@code j} with every id offset by
 * {@code (maxId + 1) * j}; {@code Trace.truncate} keeps the first {@code n} requests.
 *
 * <p><b>The built-in workload</b> ({@link io.kvprefix.workload.SyntheticTrace}).
 * <ul>
 *   <li><b>Shared system prompts.</b> 8 prompts of 1 to 24 whole blocks (log-normal, median 4 blocks
 *       = 2,048 tokens), picked with Zipf-like popularity (weight {@code 1/(rank+1)^1.1}); 25% of
 *       conversations start without one.
 *   <li><b>Multi-turn conversations.</b> Conversations start as a Poisson process, one every 0.75 s on
 *       average. A conversation has 1 + a geometric number of turns (mean 2.5, at most 16). Turn
 *       {@code k}'s prompt is turn {@code k-1}'s prompt, plus its answer, plus a new user message, so
 *       later turns extend earlier prefixes; the conversation stops early when a prompt would pass
 *       131,072 tokens (a 128k context).
 *   <li><b>Long-tailed lengths.</b> A user message is log-normal (median 1,000 tokens, sigma 1.0, at
 *       most 16,000) or, with probability 15%, a pasted document: Pareto (minimum 4,000 tokens, alpha
 *       1.2, at most 80,000). An answer is log-normal (median 250 tokens, sigma 0.9), 1 to 2,000 tokens.
 *   <li><b>Arrivals.</b> A turn arrives after the previous answer was decoded (20 ms per output token)
 *       and the user thought about it (exponential, mean 20 s). Timestamps are whole milliseconds; the
 *       trace is the first {@code requests} arrivals of this open process (about 3.2 requests per
 *       second).
 * </ul>
 * With the defaults (10,000 requests, seed 42) this gives prompts of 10,502 tokens on average (median
 * 6,296, p99 82,704; the Mooncake conversation trace: 12,035 / 6,909 / 85,401), answers of 365 tokens,
 * 210,072 blocks over 52 minutes, and an infinite-cache prefix-hit bound of 63% (conversation trace:
 * 37%; the system prompts and the growing conversations are reused more here). Block ids behave like
 * Mooncake's: ids name prefixes (an id never appears at two positions), a block keeps its id in every
 * later turn once it is full, the partial last block of a prompt gets a fresh id in every request (its
 * content changes as the conversation grows), and ids are renumbered densely {@code 0, 1, 2, ...} in
 * order of first appearance.
 *
 * <p><b>The mock engine</b> ({@link io.kvprefix.workload.MockEngine}). The cache holds at most
 * {@code capacity()} blocks. A block is either <em>in use</em> (pinned by one or more running
 * requests) or <em>free</em> (cached, evictable); free blocks sit in an LRU queue in the order they
 * were freed. {@code admit} finds the longest prefix of the request's full blocks that is cached and
 * pins it (a free block leaves the queue), then allocates the remaining full blocks: while the cache
 * is full it evicts the block at the head of the queue (least recently freed), then stores the new
 * blocks, pinned. Events: one {@code KvEvent.Removed} listing the evicted blocks in eviction order,
 * then one {@code KvEvent.Stored} for the new blocks with the parent = the last cached block before
 * them (no parent when they start at position 0). {@code release} (the request finished) unpins its
 * blocks <em>tail first</em>, so a request's last block is queued, and later evicted, before its
 * first, as vLLM's free queue does; a block still used by another request stays pinned. Consequences
 * (checked by {@code checkInvariants()}): a block in use is never evicted; a block is evicted only
 * after every cached child of it (leaf first), so every cached block's parent is cached, an eviction
 * never orphans a block, and a stored event's parent is always held. Only full blocks: a request of
 * {@code input_length} tokens has {@code input_length / tokensPerBlock} full blocks; ids past them (the
 * partial last block) are never stored.
 *
 * <p>A request larger than the free room: when the new blocks outnumber {@code capacity} minus the
 * blocks pinned by running requests (this one's cached prefix included), vLLM would preempt a running
 * request or keep this one waiting. The mock engine has no scheduler: it evicts every free block it
 * needs, caches the leading new blocks that fit, and reports the rest as
 * {@code AdmitResult.uncachedBlocks}; they are never stored (the next request with that prompt gets a
 * shorter hit). With {@code gen-ops} (each request released right after its admission) this happens
 * only to a request of more than {@code capacity} full blocks.
 *
 * <p>Engine hashes: a block's engine hash {@code E} is the mock engine's own scheme, deliberately
 * unlike kvprefix's chain hash: {@code MockEngine.engineHash} chains the block <em>ids</em> (not
 * tokens, not local hashes) through the SplitMix64 mixer, {@code E[0] = engineHash(false, 0, id[0])},
 * {@code E[i] = engineHash(true, E[i-1], id[i])}. So {@code E} names a whole prefix, as vLLM's block
 * hashes do, and the same prompt gets the same names on every engine. Stored events carry
 * {@code (E, L)} with {@code L} from the {@code LocalHashTable}; {@code DynamoEngineHashes} renames
 * them to Dynamo's chain hashes for the yardstick.
 *
 * <p>CPU tier: with a CPU capacity above 0 the engine offloads like vLLM's offloading connector used
 * as a victim cache: a block the GPU evicts goes to a CPU LRU of that many blocks (a
 * {@code KvEvent.Copied} on {@code Medium.CPU} names it before the GPU's {@code KvEvent.Removed}), the
 * CPU evicts its least recently used block when full (a removal on the CPU), and a request whose
 * prefix continues on the CPU after its GPU hit loads those blocks back
 * ({@code AdmitResult.lowerTierBlocks}: stored on the GPU again, not computed; they stay on the CPU
 * too).
 *
 * <p><b>The replay</b> ({@link io.kvprefix.workload.Workload}). Workers {@code 0 .. workers-1} (dp
 * rank 0) each run a mock engine of {@code cacheBlocks} blocks. Requests are taken in arrival order;
 * each goes to a worker drawn uniformly at random ({@code Rng} seeded with {@code seed}, one draw per
 * request), is admitted by that worker's engine and released at once (no two requests overlap: an
 * offline replay, like Dynamo's mocker at a high speedup). In stream order, the events that precede
 * step {@code i}'s match are those of steps {@code 0 .. i-1} (what a trace-order replay waits for).
 */
package io.kvprefix.workload;
