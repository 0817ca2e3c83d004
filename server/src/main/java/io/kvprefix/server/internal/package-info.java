/**
 * The Vert.x parts of {@code kvprefix serve}: one {@code FrontDoor} verticle per event loop (its HTTP
 * server and its pooled client to the engines), one {@code Exchange} per proxied request, the header
 * rules, and the counters of what is open. Nothing here is API; {@link io.kvprefix.server.ServeServer}
 * starts them.
 */
package io.kvprefix.server.internal;
