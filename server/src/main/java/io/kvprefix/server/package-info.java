/**
 * {@code kvprefix serve}: the OpenAI-compatible, KV-aware HTTP router, a front door over the router
 * service ({@code io.kvprefix.service}). {@link io.kvprefix.server.ServeServer} serves
 * {@code /v1/completions}, {@code /v1/chat/completions}, {@code /v1/models} (the engines' union),
 * {@code /health}, {@code /metrics}, the route API ({@code /kvprefix/v1/route}, {@code /kvprefix/v1/explain})
 * and passes every other path through to an engine chosen by load; docs/SERVE.md states the contract, and
 * docs/OPERATING.md section 9 how to run it.
 *
 * <p><b>The proxy.</b> A request's body is read whole (up to {@code --max-body}; it is needed to route
 * and to retry), classified, admitted and routed, then forwarded byte for byte. The response comes
 * back as it arrives: status and headers (less the hop-by-hop ones, plus {@code x-kvprefix-worker},
 * {@code x-kvprefix-cached-blocks}, {@code x-kvprefix-route}), then the body chunk by chunk, each chunk
 * written and flushed as it comes (an event stream's {@code data: [DONE]} too), with backpressure: while
 * the client's write queue is full, the engine's response is paused, so a slow client slows its own
 * stream and holds no more than the write queue in memory. A client that goes away closes the engine's
 * connection (vLLM aborts the request and frees its KV); an engine that fails before its response head
 * is retried once on the next engine; one that breaks off an event stream ends it with an error event
 * and {@code data: [DONE]}.
 *
 * <p><b>Why Vert.x.</b> A proxy in front of LLM engines holds thousands of long streams that are idle
 * most of the time (a prefill can take seconds, then a token every few tens of milliseconds), so it
 * wants event-loop I/O with no thread per stream, backpressure in both directions, and a pooled HTTP
 * client with per-request idle timeouts. Vert.x core gives all of that on Netty, in one
 * dependency: its HTTP server and HTTP client share the event loop of a connection, so a
 * chunk goes from the engine's socket to the client's without a thread hop, and {@code pause},
 * {@code resume} and {@code writeQueueFull} are the backpressure. Plain Netty would mean writing the
 * HTTP client's pooling, the server's keep-alive and 100-continue handling, and the flow control by
 * hand: more code to get wrong, for no gain we know of. Helidon SE 4 serves each request on a
 * virtual thread with blocking I/O: simple for a server, but a proxy then copies each stream with
 * blocking reads and writes on a thread of its own, with backpressure only by blocking; the event loop
 * keeps an open stream down to its buffers (issue 25 sets a budget of 64 KB per open stream, which the
 * proxy benchmark is to measure). docs/OPERATING.md section 9 has the same reasoning.
 */
package io.kvprefix.server;
