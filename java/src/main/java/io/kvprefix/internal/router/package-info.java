/**
 * The router's internals: the per-worker load table ({@link io.kvprefix.internal.router.LoadTable},
 * {@link io.kvprefix.internal.router.WorkerLoad}), the cost policy of docs/SPEC.md section 6
 * ({@link io.kvprefix.internal.router.RoutingPolicy}) and the predicted index that stands in for KV
 * events when there are none ({@link io.kvprefix.internal.router.PredictedBlocks}).
 */
package io.kvprefix.internal.router;
