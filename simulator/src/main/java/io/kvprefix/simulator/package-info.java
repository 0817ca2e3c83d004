/**
 * The routing simulation behind {@code kvprefix demo} and {@code kvprefix simulate}: a trace replayed in
 * simulated time against {@code N} simulated engines, once per routing policy, and the results side by
 * side, with a request-rate sweep (docs/BENCHMARKS.md section 5 has the model and its sources).
 *
 * <ul>
 *   <li>{@link io.kvprefix.cli.internal.sim.Simulator}: the discrete-event loop (arrivals, engine
 *       timers, event delivery after the delay, metrics snapshots, a late join) for one policy.
 *   <li>{@link io.kvprefix.cli.internal.sim.SimEngine}: one engine, a mock prefix cache with vLLM V1's
 *       chunked-prefill step ({@code vllm-chunked}) or one prefill at a time ({@code one-at-a-time}).
 *   <li>{@link io.kvprefix.cli.internal.sim.PolicyKind} and {@link io.kvprefix.cli.internal.sim.Policy}:
 *       the policies compared, by name. The cache-aware ones are the core's {@link io.kvprefix.Router}
 *       with each project's policy ({@link io.kvprefix.cli.internal.sim.RouterBacked}); the baselines are
 *       round-robin, random and least-loaded.
 *   <li>{@link io.kvprefix.cli.internal.sim.SimSettings}: the deployment, the engine model, the event
 *       delay and the scenario (rate, a slow engine, a late joiner).
 *   <li>{@link io.kvprefix.cli.internal.sim.RateSweep}: every policy at several request rates, in
 *       parallel, and each one's knee.
 *   <li>{@link io.kvprefix.cli.internal.sim.PolicyResult}, {@link io.kvprefix.cli.internal.sim.SimulationReport}
 *       and {@link io.kvprefix.cli.internal.sim.ReportPage}: hit rate, prefill tokens, simulated TTFT,
 *       spread, hits given up and the measured decision cost, with the infinite-cache bound and the TTFT
 *       floor, as a terminal table, JSON and a self-contained HTML page.
 * </ul>
 *
 * <p><b>Why here.</b> Only the command line runs the simulation, so it lives in the command line's
 * module, under {@code internal}: it is not an API. It builds on the workloads module (traces, mock
 * engines, {@link io.kvprefix.workload.Rng}) and the core's {@link io.kvprefix.Router}, and nothing
 * below the command line depends on it.
 *
 * <p><b>What is measured and what is modelled.</b> Time to first token is simulated from the engine
 * model; the router's cost per decision is the only wall-clock figure. The same trace, settings and
 * seed give the same simulated results. Runs of decode-only steps are scheduled as one timer (an
 * arrival cuts them short at the next step boundary), which gives exactly the times of stepping one
 * by one and keeps a four-hour trace to seconds.
 */
package io.kvprefix.cli.internal.sim;
