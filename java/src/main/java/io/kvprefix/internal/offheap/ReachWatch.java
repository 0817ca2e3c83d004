package io.kvprefix.internal.offheap;

/**
 * A hook called after every published change of a holder entry, so tests can check every
 * intermediate state of an event (IntermediateStatesTest). Null outside tests; costs one volatile
 * read per entry change.
 *
 * <p>Locks: none.
 *
 * <p>Thread-safety: the observer is a volatile field; it is called on the thread that changed the entry.
 */
final class ReachWatch {
    /** Called after an entry changed. */
    interface Observer {
        void afterChange();
    }

    volatile Observer observer;

    void changed() {
        Observer o = observer;
        if (o != null) {
            o.afterChange();
        }
    }
}
