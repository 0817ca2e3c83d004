/**
 * The router service: the front-door-independent half of a KV-aware LLM router. {@code kvprefix
 * serve} (the {@code server/} module, Vert.x), the Gateway API endpoint picker (gRPC) and the Spring
 * Cloud Gateway starter are front doors over it: each speaks its own protocol, and all of them route
 * with the same objects, answer the same errors and export the same meters. It has no HTTP server of
 * its own (its health checks use the JDK's HTTP client). docs/SERVE.md states the contract.
 *
 * <p><b>What it holds.</b> {@link io.kvprefix.service.RouterService} owns the index and its feed (the
 * engines' ZMQ publishers with replay, as {@code kvprefix listen} reads them, or a fleet's stream as
 * {@code listen --nats} does; with a snapshot file, restored at start and saved as it runs), one
 * {@link io.kvprefix.Router} per model over the up engines that serve it (one more over every engine
 * for requests that name no model), the engines with their health (worker id, HTTP base URL and event
 * endpoints; {@link io.kvprefix.service.EngineSpec}), bounded admission, the route API's open
 * decisions ({@link io.kvprefix.service.RouteApi}) and the meters.
 *
 * <p><b>A request, as a front door drives it.</b> {@link io.kvprefix.service.RouterService#classify}
 * reads the path and body: the API, the model (a LoRA adapter's name salts the hashes), the stream
 * flags, {@code cache_salt}, and the prompt as token ids (routed by cache at once), text or chat
 * messages (by cache through the model's tokenizer when one is configured, else by load, and the
 * response says why), or nothing (by load). {@link io.kvprefix.service.RouterService#admit} gives an
 * admission slot, {@link io.kvprefix.service.RouterService#route} the decision as a
 * {@link io.kvprefix.service.RoutedRequest}, whose calls drive the rest:
 *
 * <table>
 *   <caption>The request lifecycle: event, and what the service does</caption>
 *   <tr><th>event (who reports it)</th><th>what the service does</th></tr>
 *   <tr><td>request arrives ({@code classify})</td><td>parses it once; 400 for a malformed body, 404 for
 *       a model no engine serves</td></tr>
 *   <tr><td>admission ({@code admit})</td><td>a slot at once, or a place in the queue, or 429
 *       ({@code queue_full}, later {@code queue_timeout})</td></tr>
 *   <tr><td>routing ({@code route})</td><td>one hash-and-match call and the policy on the model's
 *       router; the chosen engine is charged the request's prefill and decode load; 503 when no engine
 *       serving the model is up</td></tr>
 *   <tr><td>connection failure before the first byte ({@code retry})</td><td>the engine leaves
 *       routing; this try's load is released; the request is routed once more among the others (502
 *       if that fails too or none is left)</td></tr>
 *   <tr><td>first response byte ({@code firstByte})</td><td>{@code prefillFinished()}: the prefill load
 *       ends and kvprefix-ttft learns the engine's speed; the time to it is recorded</td></tr>
 *   <tr><td>response bytes ({@code responseBytes})</td><td>read as they pass for the usage block (SSE
 *       chunks or the JSON body), never held back</td></tr>
 *   <tr><td>end of the response ({@code completed})</td><td>{@code finished()}: all load released, the
 *       slot freed, the usage (cached tokens reported next to predicted) counted</td></tr>
 *   <tr><td>engine error mid-response ({@code failed})</td><td>{@code finished()}; the engine leaves
 *       routing until its health check passes</td></tr>
 *   <tr><td>client disconnect ({@code cancelled})</td><td>{@code finished()}; the front door aborts
 *       the engine's request so that the engine frees its KV</td></tr>
 *   <tr><td>route API: {@code first-token}, {@code done}, expiry</td><td>{@code prefillFinished()};
 *       {@code finished()}; {@code finished()}, counted as expired</td></tr>
 *   <tr><td>health check fails / passes (the service's timer)</td><td>the engine leaves every router
 *       (its load forgotten) / joins the routers of the models it lists</td></tr>
 * </table>
 *
 * <p><b>The speed-of-light bound.</b> {@link io.kvprefix.service.InfiniteCacheSketch} counts, in fixed
 * memory, the hits one shared never-evicting cache would have had, with a bracket that always holds
 * the exact count (issue 31 item 3); the service observes every routed request in it and counts its
 * share beside the engine's report and the index's prediction (docs/METRICS.md section 4).
 *
 * <p><b>Threads.</b> Everything is thread-safe. Classifying, admitting and routing token ids never
 * block and may run on an event loop; tokenizing a text or chat prompt blocks
 * ({@link io.kvprefix.service.RouterService#needsBlockingRoute}). Health checks, snapshot saves and
 * decision expiry run on the service's daemon timer thread; the ZMQ feed has its own I/O thread.
 */
package io.kvprefix.service;
