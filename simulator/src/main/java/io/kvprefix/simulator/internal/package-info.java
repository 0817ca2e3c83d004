/**
 * The simulation's policies, not an API: each {@link io.kvprefix.simulator.PolicyKind} made by
 * {@link io.kvprefix.simulator.internal.Policies}, either kvprefix's {@link io.kvprefix.Router} with
 * one of its named policies over an event-fed or a predicted index
 * ({@link io.kvprefix.simulator.internal.RouterBacked}: the router's clock is the simulation's, and
 * the engines' metrics snapshots are reported to it), or one of the cache-blind baselines in
 * {@link io.kvprefix.simulator.internal.Policy}. {@link io.kvprefix.simulator.internal.SimRequest} is
 * a request in flight with its routing decision.
 */
package io.kvprefix.simulator.internal;
