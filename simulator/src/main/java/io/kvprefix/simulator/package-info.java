/**
 * The routing simulation behind {@code kvprefix demo} and {@code kvprefix simulate}, and the engine
 * model it runs on: a trace replayed in simulated time against {@code N} simulated engines, once per
 * routing policy, the results side by side, and a request-rate sweep (docs/BENCHMARKS.md section 5 has
 * the model and its sources).
 *
 * <h2>The simulation</h2>
 *
 * <ul>
 *   <li>{@link io.kvprefix.simulator.Simulator}: the discrete-event loop for one policy (below).
 *   <li>{@link io.kvprefix.simulator.PolicyKind}: the policies compared, by name. The cache-aware ones
 *       are the core's {@link io.kvprefix.Router} with each project's policy; the baselines are
 *       round-robin, random and least-loaded (made in {@code internal}).
 *   <li>{@link io.kvprefix.simulator.SimSettings}: the deployment, the engine model, the event delay and
 *       the scenario (rate, a slow engine, a late joiner).
 *   <li>{@link io.kvprefix.simulator.RateSweep}: every policy at several request rates, in parallel, and
 *       each one's knee.
 *   <li>{@link io.kvprefix.simulator.PolicyResult} and {@link io.kvprefix.simulator.SimulationReport}:
 *       hit rate, prefill tokens, simulated TTFT, spread, hits given up and the measured decision cost,
 *       with the infinite-cache bound and the TTFT floor, as a terminal table, JSON and a self-contained
 *       HTML page.
 * </ul>
 *
 * <p><b>The loop.</b> <em>Arrival</em> (the request's timestamp divided by the rate): the policy picks
 * one of the registered workers (this call is timed on the wall clock: the policy's cost per decision)
 * and the request is submitted to that engine. <em>Engine work</em>: the engine model below; the time to
 * first token is taken when the prefill's last token is computed, and the policy hears of it and of the
 * request's end. <em>Event delivery</em>: what an engine publishes reaches the policy's index the event
 * delay later, in publication order. <em>Metrics</em>: policies that read engine metrics (llm-d's
 * scorers) get every engine's waiting and running requests and KV usage every
 * {@link io.kvprefix.simulator.SimSettings#METRICS_REFRESH}. <em>Join</em>: the last worker may register
 * late, and worker 0 may run slower. Timers at the same simulated time run in the order they were set,
 * all before an arrival at that time.
 *
 * <p><b>What is measured and what is modelled.</b> Time to first token is simulated from the engine
 * model; the router's cost per decision is the only wall-clock figure. The same trace, settings and seed
 * give the same simulated results. Runs of decode-only steps are scheduled as one timer (an arrival cuts
 * them short at the next step boundary), which gives exactly the times of stepping one by one and keeps
 * a four-hour trace to seconds.
 *
 * <h2>The engine model</h2>
 *
 * One vLLM-like engine, on a clock it does not own, so that the simulator (simulated time) and a
 * stand-in engine process (a scaled wall clock) run the same code.
 *
 * <ul>
 *   <li><b>The cache</b> is a {@link io.kvprefix.workload.MockEngine}: an LRU prefix cache of full
 *       blocks, evicting least recently freed first, leaf first, with an optional CPU tier; it stores a
 *       request's blocks when the request is admitted and releases them when it finishes.
 *   <li><b>{@code vllm-chunked}</b> (the default) steps like vLLM V1's scheduler with chunked prefill:
 *       each step has a budget of {@code maxBatchedTokens} tokens, running requests first (a decode takes
 *       1 token, a partly prefilled prompt the rest of its prompt up to the budget), then waiting requests
 *       first come first served, at most {@code maxNumSeqs} running; a step lasts
 *       {@code 1/decodeTokensPerS + tokens/prefillTokensPerS} (plus the time to load a new request's
 *       CPU-tier blocks), so a decode-only step gives each request {@code decodeTokensPerS} tokens per
 *       second and prefill runs at up to {@code prefillTokensPerS}. At least the last prompt token is
 *       computed even when everything is cached; the prefill's last step samples the first output token.
 *       After each step the engine publishes the stored blocks that step completed, with the
 *       admission's evictions in the first chunk's batch.
 *   <li><b>{@code one-at-a-time}</b>: one prefill at a time, first come first served, taking
 *       {@code uncached/prefillTokensPerS} seconds; decode beside it, {@code output/decodeTokensPerS}
 *       seconds per request. The admission's events are published when its prefill ends.
 *   <li><b>Slowness</b> multiplies every duration. Times are nanoseconds, rounded per timer.
 * </ul>
 *
 * <p><b>The calls.</b> {@link io.kvprefix.simulator.Engine#create Engine.create(EngineSettings,
 * MockEngine, EngineHost)} makes an idle engine. {@link io.kvprefix.simulator.Engine#submit submit}
 * gives it an {@link io.kvprefix.simulator.EngineRequest} (a trace request's blocks and lengths, or a
 * prompt of real token ids whose blocks are named by their local hashes:
 * {@link io.kvprefix.simulator.EngineRequest#ofTokens}, over a cache built with the identity as its
 * local hash of an id); {@link io.kvprefix.simulator.Engine#abort abort} takes one back (a running one
 * publishes its unpublished events and releases its blocks); {@code waitingRequests()},
 * {@code runningRequests()} and {@code kvUsage()} are vLLM's three load metrics. The engine calls its
 * {@link io.kvprefix.simulator.EngineHost}: {@code now()} and {@code schedule(at, action)} for time,
 * then {@code admitted} (the cached prefix is known: {@code cachedTokens()}), {@code publish} (KV events,
 * with the request and the block the stored event starts at), {@code firstToken}, {@code decoded}
 * (more output tokens) and {@code finished}. {@link io.kvprefix.simulator.EngineSettings} holds the
 * scheduler, the speeds and limits, the slowness and whether decode runs are one timer (a streaming
 * driver turns that off, so each token is reported when its step ends).
 *
 * <p><b>Threads.</b> An engine, its cache, its requests and its host's callbacks are confined to one
 * thread: the host runs every scheduled action on the thread that calls {@code submit} and
 * {@code abort}. A real-time driver gives each engine one thread (a single-threaded scheduled executor),
 * maps {@code now()} to its scaled wall clock, and hands requests and aborts to that thread.
 *
 * <p><b>Why a module of its own.</b> The command line runs the simulation and the stand-in engine runs
 * the engine model; the module builds on the workloads module (traces, mock engines,
 * {@link io.kvprefix.workload.Rng}) and the core's {@link io.kvprefix.Router}, and depends on nothing
 * above them.
 */
package io.kvprefix.simulator;
