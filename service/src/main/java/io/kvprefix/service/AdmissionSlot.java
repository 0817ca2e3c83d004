package io.kvprefix.service;

/**
 * One of the service's bounded admission slots (docs/SERVE.md section 4), held by a request from
 * {@link RouterService#admit()} until it ends; {@link RouterService#route} hands it to the
 * {@link RoutedRequest}, which frees it when it ends.
 *
 * <p>Thread-safety: thread-safe; {@link #release()} is idempotent.
 */
public interface AdmissionSlot {
    /** Frees the slot (the oldest queued request gets it). Idempotent. */
    void release();
}
