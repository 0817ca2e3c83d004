package io.kvprefix.epp.internal;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;

/**
 * Envoy's {@code envoy.service.ext_proc.v3.ExternalProcessor} service: each {@code Process} stream is
 * one request, handled by its own {@link PickStream}.
 *
 * <p>Thread-safety: thread-safe; gRPC calls {@link #process} from any thread.
 */
public final class Picker extends ExternalProcessorGrpc.ExternalProcessorImplBase {
    private final Pick pick;
    private final EppMeters meters;
    private final long maxBody;

    public Picker(Pick pick, EppMeters meters, long maxBody) {
        this.pick = pick;
        this.meters = meters;
        this.maxBody = maxBody;
    }

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responses) {
        return new PickStream(pick, responses, meters, maxBody);
    }
}
