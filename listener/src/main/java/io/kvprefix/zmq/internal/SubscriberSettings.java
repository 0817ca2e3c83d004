package io.kvprefix.zmq.internal;

/**
 * Tunables of a subscriber, as built by {@code KvEventSubscriber.Builder}.
 *
 * <p>Thread-safety: immutable.
 *
 * @param replayTimeoutNanos how long a replay may go without an answer before it is given up
 * @param maxPendingBatches how many live batches may wait behind a replay before it is given up
 * @param heartbeatMillis ZMTP heartbeat interval (the timeout is three times it), 0 for none
 * @param reconnectMaxMillis the longest wait between reconnection attempts
 * @param receiveHighWaterMark messages the live socket may queue before ZMQ drops (a drop is a gap, recovered by replay)
 * @param handshakeMillis how long a new connection may take to complete its ZMTP handshake before it is retried
 */
public record SubscriberSettings(
        long replayTimeoutNanos,
        int maxPendingBatches,
        int heartbeatMillis,
        int reconnectMaxMillis,
        int receiveHighWaterMark,
        int handshakeMillis) {}
