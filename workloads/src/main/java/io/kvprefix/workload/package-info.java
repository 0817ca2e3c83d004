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
 */
package io.kvprefix.workload;
