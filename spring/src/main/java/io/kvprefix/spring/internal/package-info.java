/**
 * The starter's internals (docs/SPRING.md section 3). One KV-aware exchange is driven by three pieces
 * sharing its {@link io.kvprefix.spring.internal.KvExchange}: the route's filter
 * ({@link io.kvprefix.spring.internal.KvRouteFilter}) installs the response decorator and ends the
 * routed request if the exchange ends first (a client that goes away cancels the whole Reactor chain,
 * and the gateway then disposes of the engine's connection, which vLLM takes as an abort); the routing
 * step ({@link io.kvprefix.spring.internal.RoutingStep}) reads the body once into memory (up to
 * {@code kvprefix.max-body}), classifies, admits and routes it (a tokenizer that blocks runs on
 * Reactor's bounded-elastic scheduler), points the URL at the engine and retries once elsewhere on a
 * failure before the response head; the response decorator
 * ({@link io.kvprefix.spring.internal.LifecycleResponse}) reports the first body byte, the bytes, the
 * end and a break-off as the gateway writes the engine's body, buffer by buffer, never holding one
 * back. The gateway writes an event stream with a flush per chunk because {@code text/event-stream}
 * is one of its streaming media types; the decorator keeps both of the gateway's write paths as they
 * are.
 */
package io.kvprefix.spring.internal;
