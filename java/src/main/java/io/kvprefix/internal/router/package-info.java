/**
 * The router's internals: the registry of workers and their load, where decisions are made
 * ({@link io.kvprefix.internal.router.LoadTable}, {@link io.kvprefix.internal.router.WorkerLoad}), the
 * policies' choice rules of docs/SPEC.md section 6 ({@link io.kvprefix.internal.router.Selector}:
 * {@link io.kvprefix.internal.router.DynamoCost}, {@link io.kvprefix.internal.router.SglangCacheAware},
 * {@link io.kvprefix.internal.router.LlmdScorers}, {@link io.kvprefix.internal.router.TtftEstimate}),
 * and the predicted index that stands in for KV events when there are none
 * ({@link io.kvprefix.internal.router.PredictedBlocks}).
 *
 * <p><b>One lock, O(1) membership.</b> A decision scatters the match depths onto the registered
 * workers, asks the selector, charges the choice and clears the depths, all under the table's one
 * lock, so concurrent decisions see each other's load; the match runs before, outside it. Workers sit
 * in a dense array in no order (a join appends, a leave moves the last entry into the hole) with a
 * hash map beside it, so fleets of any size join and leave in O(1) per worker; the selectors compare
 * workers where their tie-breaks need an order. A decision clears only the workers its match touched.
 *
 * <p><b>Load order</b> ({@link io.kvprefix.internal.router.LoadOrder}, docs/SPEC.md section 6.5). For
 * dynamo-cost at temperature 0 the workers also sit in one indexed min-heap per capacity weight, keyed
 * so that a worker's cost at depth 0 grows with its key; each charge and release re-sifts one entry. A
 * decision then costs the matched workers plus those of each heap's cheapest that fall within the tie
 * limit, and chooses exactly as the scan of every worker (the differential test drives both). For
 * kvprefix-ttft the heaps hold only the workers whose estimate is fixed (nothing pending, no speed of
 * their own), by requests routed; a bit per slot marks the others, which every decision visits.
 *
 * <p><b>Predicted blocks</b> ({@link io.kvprefix.internal.router.PredictedBlocks}). A block is stored
 * under its chain hash as engine hash, which names a prefix uniquely, so "is this block already
 * predicted for this worker" is a map lookup and a new suffix is stored as one {@code stored} event
 * continuing the held prefix. Expiry order: one list, oldest first, of every predicted (worker,
 * block). A decision moves the request's blocks to the young end, deepest first, so the request's
 * first block ends up youngest. Expiry (TTL) and eviction (size bound) both take from the old end, so
 * among blocks touched at the same time the deepest go first, and a block never outlives its parent:
 * every worker's predicted blocks stay prefix-closed, and the match never depends on orphans.
 *
 * <p><b>What kvprefix-ttft keeps.</b> Per worker, the prefills it was sent and has not finished
 * ({@link io.kvprefix.internal.router.PendingPrefill}, oldest first, so the estimate knows when the
 * oldest started) and a fitted prefill line ({@link io.kvprefix.internal.router.PrefillSpeed}), plus
 * the fleet's. It learns only from {@code prefillFinished()} calls: without them it charges the
 * whole pending backlog, as Dynamo's cost does.
 */
package io.kvprefix.internal.router;
