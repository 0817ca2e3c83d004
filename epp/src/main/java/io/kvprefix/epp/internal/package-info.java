/**
 * The endpoint picker's machinery: the ext_proc service ({@link io.kvprefix.epp.internal.Picker}), one
 * state machine per stream ({@link io.kvprefix.epp.internal.PickStream}), the pick on the router service
 * ({@link io.kvprefix.epp.internal.Pick}), the protocol's names and messages
 * ({@link io.kvprefix.epp.internal.Wire}), the endpoints as the gateway names them and the meters.
 *
 * <p><b>One stream, one request.</b> Envoy opens an ext_proc stream per request and sends, in order,
 * the request headers, the body in chunks, perhaps trailers, then the response's headers, body and
 * trailers. With the request body in {@code FULL_DUPLEX_STREAMED} mode the picker holds its headers
 * answer until the body is whole (the prompt decides the pick), then answers the headers with the
 * destination and sends the body back after them, in chunks of at most 62,000 bytes; a body chunk
 * never goes back before the headers answer. Each stream's messages come one at a time on a gRPC
 * thread, and every answer is sent from that thread, so the order holds without a lock.
 *
 * <p><b>No second router.</b> The pick is the router service's {@code classify}, {@code admit},
 * {@code route} and {@code fallbacks}, as {@code kvprefix serve} calls them; the response side drives
 * the same request lifecycle ({@code firstByte}, {@code completed}, {@code cancelled}). The only
 * addition is the gateway's knowledge: the subset hint restricts the route, and the served endpoint
 * moves the load to the fallback that took the request (docs/EPP.md sections 3 and 4).
 *
 * <p><b>Blocking.</b> Tokenizing a text or chat prompt and waiting for an admission slot block the
 * stream's thread; gRPC's server executor is a cached pool, so other streams go on.
 */
package io.kvprefix.epp.internal;
