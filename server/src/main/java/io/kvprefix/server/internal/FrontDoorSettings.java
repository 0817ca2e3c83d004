package io.kvprefix.server.internal;

/**
 * The front door's settings, as {@code kvprefix serve}'s options give them.
 *
 * <p>Thread-safety: immutable.
 *
 * @param host the address to bind
 * @param port the port to bind (0: any free port)
 * @param connectTimeoutMillis how long connecting to an engine may take
 * @param idleTimeoutMillis how long an engine's request, or a client's connection, may go without a byte
 * @param maxEngineConnections most pooled connections to one engine per event loop
 */
public record FrontDoorSettings(
        String host, int port, long connectTimeoutMillis, long idleTimeoutMillis, int maxEngineConnections) {}
