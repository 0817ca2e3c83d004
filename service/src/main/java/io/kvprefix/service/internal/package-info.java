/**
 * The router service's parts: the engine registry and its per-model routers, the health checker,
 * admission, the route API's decision book, the request classifier, the usage scanner, the event feed
 * and the meters. Nothing here is API; {@link io.kvprefix.service.RouterService} puts them together.
 */
package io.kvprefix.service.internal;
