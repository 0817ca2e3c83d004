/**
 * The measurements of docs/BENCHMARKS.md: the JMH suites (section 1) and the trace-replay harness
 * behind {@code kvprefix bench} and {@code kvprefix sweep} (section 2).
 *
 * <ul>
 *   <li>The JMH suites: {@link io.kvprefix.bench.HashingBenchmark}, {@link io.kvprefix.bench.MatchBenchmark},
 *       {@link io.kvprefix.bench.HashAndMatchBenchmark}, {@link io.kvprefix.bench.EventsBenchmark},
 *       {@link io.kvprefix.bench.JumpSizeBenchmark} and {@link io.kvprefix.bench.RouterBenchmark}, with
 *       the fixtures their states share ({@link io.kvprefix.bench.BenchFixtures}). Every {@code @Setup}
 *       checks its answer before anything is measured.
 *   <li>The replay harness: {@link io.kvprefix.bench.ReplayBench} runs an in-memory
 *       {@link io.kvprefix.bench.OpStream} (loaded from an op-stream file or built from a workload)
 *       with sticky writer threads and reader threads, free or paced, with Dynamo's accounting.
 *   <li>The suites' {@code impl} parameters name the index implementations as the command line's
 *       {@code --impl} does ({@code heap}, {@code offheap}, {@code offheap-java}, {@code offheap-native}),
 *       through the op-stream module's {@link io.kvprefix.opstream.Implementations}.
 * </ul>
 *
 * <p><b>Dependencies.</b> The module depends on the core library, on the op-stream module (the
 * harness loads op-stream files) and on the workloads module (suites and harness replay traces
 * through mock engines), and on JMH; it knows nothing of the command line. The command line depends
 * on it and packages the suites into its jar, so {@code ./kvprefix jmh} runs them and
 * {@code ./kvprefix bench} / {@code sweep} drive the harness. The replay harness is here, not in the
 * command line, because it is a benchmark: it owns the threads, the timing and the accounting, and the
 * commands only parse options and print what it measured.
 *
 * <p>{@link io.kvprefix.bench.HashingBenchmark} measures the cost of one FFM downcall that hashes
 * nothing, so it calls the core's internal binding ({@code io.kvprefix.internal.ffi.KvpBindings})
 * directly: the one place outside the core that reaches into its internals, on purpose.
 */
package io.kvprefix.bench;
