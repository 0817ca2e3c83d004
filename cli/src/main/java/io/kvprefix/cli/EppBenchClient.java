package io.kvprefix.cli;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code epp-bench}'s gateway side: Envoy's message sequence for one request over a real gRPC channel
 * (headers, the body in chunks of a given size, then a headers-only response), timing the first
 * message out to the destination's headers answer in (docs/EPP.md section 9).
 *
 * <p>Thread-safety: thread-safe; each {@link #request} runs one stream on the calling thread.
 */
final class EppBenchClient implements AutoCloseable {
    private static final String DESTINATION = "x-gateway-destination-endpoint";

    /**
     * One request's outcome.
     *
     * <p>Thread-safety: immutable.
     *
     * @param nanos from the first message sent to the destination received
     * @param destination the destination list, or null if the picker refused
     */
    record Result(long nanos, String destination) {}

    private final ManagedChannel channel;

    EppBenchClient(int port) {
        channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .maxInboundMessageSize(64 << 20)
                .build();
    }

    /** One request: {@code body} sent in chunks of {@code chunk} bytes; blocks until the stream ends. */
    Result request(byte[] body, int chunk) throws IOException, InterruptedException {
        BlockingQueue<Object> in = new LinkedBlockingQueue<>();
        StreamObserver<ProcessingRequest> out = ExternalProcessorGrpc.newStub(channel)
                .process(new StreamObserver<>() {
                    @Override
                    public void onNext(ProcessingResponse r) {
                        in.add(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        in.add(t);
                    }

                    @Override
                    public void onCompleted() {
                        in.add("end");
                    }
                });
        long t0 = System.nanoTime();
        out.onNext(ProcessingRequest.newBuilder()
                .setProtocolConfig(ProtocolConfiguration.newBuilder()
                        .setRequestBodyMode(BodySendMode.FULL_DUPLEX_STREAMED)
                        .setResponseBodyMode(BodySendMode.FULL_DUPLEX_STREAMED))
                .setRequestHeaders(
                        HttpHeaders.newBuilder().setHeaders(headers(":method", "POST", ":path", "/v1/completions")))
                .build());
        for (int off = 0; off < body.length; off += chunk) {
            int end = Math.min(body.length, off + chunk);
            out.onNext(ProcessingRequest.newBuilder()
                    .setRequestBody(HttpBody.newBuilder()
                            .setBody(ByteString.copyFrom(body, off, end - off))
                            .setEndOfStream(end == body.length))
                    .build());
        }
        ProcessingResponse first = next(in);
        long nanos = System.nanoTime() - t0;
        if (first.hasImmediateResponse()) {
            out.onCompleted();
            return new Result(nanos, null);
        }
        String dest = destination(first);
        while (!next(in).getRequestBody()
                .getResponse()
                .getBodyMutation()
                .getStreamedResponse()
                .getEndOfStream()) {
            // the body coming back
        }
        out.onNext(ProcessingRequest.newBuilder()
                .setResponseHeaders(HttpHeaders.newBuilder()
                        .setHeaders(headers(":status", "200", "content-type", "application/json"))
                        .setEndOfStream(true))
                .build());
        next(in); // the response headers' answer: the request is done
        out.onCompleted();
        return new Result(nanos, dest);
    }

    private static ProcessingResponse next(BlockingQueue<Object> in) throws IOException, InterruptedException {
        Object o = in.poll(120, TimeUnit.SECONDS);
        if (o instanceof ProcessingResponse r) {
            return r;
        }
        throw new IOException("the picker's stream ended without answering: " + o);
    }

    private static String destination(ProcessingResponse r) {
        for (var h : r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
            if (h.getHeader().getKey().equals(DESTINATION)) {
                return h.getHeader().getRawValue().toStringUtf8();
            }
        }
        return null;
    }

    private static HeaderMap headers(String... kv) {
        HeaderMap.Builder m = HeaderMap.newBuilder();
        for (int i = 0; i < kv.length; i += 2) {
            m.addHeaders(HeaderValue.newBuilder().setKey(kv[i]).setRawValue(ByteString.copyFromUtf8(kv[i + 1])));
        }
        return m.build();
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
