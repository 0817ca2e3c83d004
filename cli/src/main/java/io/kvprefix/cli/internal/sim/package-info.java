/**
 * The routing simulation behind {@code kvprefix demo} and {@code kvprefix simulate}: a trace replayed in
 * simulated time against {@code N} mock engines, once per routing policy, and the results side by side.
 *
 * <ul>
 *   <li>{@link io.kvprefix.cli.internal.sim.Simulator}: the discrete-event loop (arrival, prefill
 *       start, prefill end, decode end) for one policy.
 *   <li>{@link io.kvprefix.cli.internal.sim.Policy}: the policies compared: kvprefix's
 *       {@link io.kvprefix.Router} fed by the engines' KV events, the same router predicting cache
 *       contents from its own decisions, round-robin, random and least-loaded.
 *   <li>{@link io.kvprefix.cli.internal.sim.SimSettings}: the deployment and the fixed cost model (one
 *       prefill at a time per worker, decode beside it).
 *   <li>{@link io.kvprefix.cli.internal.sim.PolicyResult} and
 *       {@link io.kvprefix.cli.internal.sim.SimulationReport}: hit rate, prefill tokens, simulated TTFT,
 *       spread and the measured decision cost, as a terminal table, JSON and a self-contained HTML page.
 * </ul>
 *
 * <p><b>Why here.</b> Only the command line runs the simulation, so it lives in the command line's
 * module, under {@code internal}: it is not an API. It builds on the workloads module (traces, mock
 * engines, {@link io.kvprefix.workload.Rng}) and the core's {@link io.kvprefix.Router}, and nothing
 * below the command line depends on it.
 *
 * <p><b>What is measured and what is modelled.</b> Time to first token is simulated from the cost
 * model; the router's cost per decision is the only wall-clock figure. The event-fed index hears an
 * admission's events when its prefill ends, so it lags its engine by one prefill, as it would behind
 * real engines. The same trace, settings and seed give the same simulated results.
 */
package io.kvprefix.cli.internal.sim;
