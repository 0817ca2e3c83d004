package io.kvprefix.internal.offheap;

/**
 * A hook called after every change of a worker bit, so tests can check every intermediate state
 * of an event (IntermediateStatesTest). Null outside tests; costs one volatile read per bit change.
 *
 * <p>Thread-safety: the observer is a volatile field; it is called on the thread that changed the bit.
 */
final class BitWatch {
    /** Called after a bit changed. */
    interface Observer {
        void afterBitChange();
    }

    volatile Observer observer;

    void changed() {
        Observer o = observer;
        if (o != null) {
            o.afterBitChange();
        }
    }
}
