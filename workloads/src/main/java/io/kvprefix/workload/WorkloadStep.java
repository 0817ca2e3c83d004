package io.kvprefix.workload;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import java.util.List;

/**
 * One request of a simulated workload and everything it puts into the op stream, in stream order:
 * first its match (the local hashes of <em>all</em> its blocks, the partial last one included, as
 * Dynamo's benchmark queries them), then the events of the worker that served it
 * ({@link AdmitResult#events()}: removed, then stored).
 *
 * <p>Thread-safety: immutable as long as its arrays are not modified.
 *
 * @param request the request
 * @param worker the worker it was sent to
 * @param matchHashes the local hashes of every block of the request
 * @param admit what the worker's engine did with it
 */
public record WorkloadStep(TraceRequest request, Worker worker, long[] matchHashes, AdmitResult admit) {

    /** The events that follow the match. */
    public List<KvEvent> events() {
        return admit.events();
    }
}
