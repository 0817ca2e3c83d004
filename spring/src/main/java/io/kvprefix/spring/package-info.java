/**
 * kvprefix in Spring Cloud Gateway: a Spring Boot starter that turns a gateway route into a KV-aware
 * one (docs/SPRING.md). Its auto-configuration ({@link io.kvprefix.spring.KvprefixAutoConfiguration})
 * builds one {@link io.kvprefix.service.RouterService} from the {@code kvprefix.*} properties
 * ({@link io.kvprefix.spring.KvprefixProperties}), the same object {@code kvprefix serve} runs on, with
 * the same index, event feed, routers, health checks, admission and meters; there is no second
 * implementation of anything the service decides. The
 * {@link io.kvprefix.spring.KvAwareRoutingGatewayFilterFactory} filter is what a route names.
 *
 * <p><b>Where it sits in the gateway's chain.</b> Spring Cloud Gateway runs a route's filters and its
 * global filters as one chain sorted by order; the engine's response is written to the client by
 * {@code NettyWriteResponseFilter} (order -1) after the HTTP client's filter has the response head,
 * and the request's URL is computed from the route by {@code RouteToRequestUrlFilter} (order 10000).
 * So the route's filter (order -2) wraps the client's response to watch the body as it is written,
 * and the routing step (order 10100, after the route's own filters and the URL, before the load
 * balancer's 10150 and the HTTP client) reads the body, routes, and points the URL at the engine. The
 * gateway facts were read from spring-cloud-gateway's {@code NettyRoutingFilter},
 * {@code NettyWriteResponseFilter} and {@code RouteToRequestUrlFilter} at tag v5.0.3 (commit
 * 0d4e452a477a8cb3e4d8543a3261353a6c89d1dc); the starter builds against 5.0.4.
 *
 * <p><b>Spring stays here.</b> The core modules and the service have no Spring dependency: this module
 * imports Spring Boot's and Spring Cloud's BOMs for itself alone.
 */
package io.kvprefix.spring;
