package io.kvprefix.epp;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kvprefix.epp.internal.Wire;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The gateway's side of the ext_proc protocol, built from the same Envoy stubs: a real gRPC channel to
 * the picker, and per request a stream that sends Envoy's message sequence (the protocol configuration
 * on the first message, request headers with HTTP/2 pseudo-headers as {@code raw_value}, the body in the
 * chunks a test chooses, the response side) and collects every answer in order.
 */
final class Envoy implements AutoCloseable {
    private final ManagedChannel channel;

    Envoy(int port) {
        channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                .usePlaintext()
                .maxInboundMessageSize(64 << 20)
                .build();
    }

    Stream open() {
        return new Stream(BodySendMode.FULL_DUPLEX_STREAMED);
    }

    /** A stream whose protocol configuration names {@code requestMode} for the request body. */
    Stream open(BodySendMode requestMode) {
        return new Stream(requestMode);
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

    /** One request's stream. */
    final class Stream implements StreamObserver<ProcessingResponse> {
        final BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
        final StreamObserver<ProcessingRequest> out;
        private final BodySendMode requestMode;
        private boolean first = true;

        Stream(BodySendMode requestMode) {
            this.requestMode = requestMode;
            out = ExternalProcessorGrpc.newStub(channel).process(this);
        }

        @Override
        public void onNext(ProcessingResponse r) {
            answers.add(r);
        }

        @Override
        public void onError(Throwable t) {
            answers.add(t);
        }

        @Override
        public void onCompleted() {
            answers.add("completed");
        }

        private ProcessingRequest.Builder message() {
            ProcessingRequest.Builder b = ProcessingRequest.newBuilder();
            if (first) {
                first = false;
                b.setProtocolConfig(ProtocolConfiguration.newBuilder()
                        .setRequestBodyMode(requestMode)
                        .setResponseBodyMode(BodySendMode.FULL_DUPLEX_STREAMED));
            }
            return b;
        }

        /** The request headers; {@code subset} (or null) as the subset hint's metadata. */
        Stream headers(String method, String path, boolean endOfStream, List<String> subset) {
            ProcessingRequest.Builder b = message()
                    .setRequestHeaders(HttpHeaders.newBuilder()
                            .setHeaders(headerMap(Map.of(
                                    ":method",
                                    method,
                                    ":path",
                                    path,
                                    ":authority",
                                    "gateway",
                                    "content-type",
                                    "application/json")))
                            .setEndOfStream(endOfStream));
            if (subset != null) {
                Struct s = Wire.listMetadata(Wire.SUBSET_NAMESPACE, Wire.SUBSET, subset);
                b.setMetadataContext(Metadata.newBuilder()
                        .putFilterMetadata(
                                Wire.SUBSET_NAMESPACE,
                                s.getFieldsOrThrow(Wire.SUBSET_NAMESPACE).getStructValue()));
            }
            out.onNext(b.build());
            return this;
        }

        /** The body cut at {@code cuts} (byte offsets), each piece one message, the last one ending the stream. */
        Stream body(byte[] body, int... cuts) {
            int from = 0;
            List<Integer> ends = new ArrayList<>();
            for (int c : cuts) {
                ends.add(c);
            }
            ends.add(body.length);
            for (int i = 0; i < ends.size(); i++) {
                int to = ends.get(i);
                out.onNext(message()
                        .setRequestBody(HttpBody.newBuilder()
                                .setBody(ByteString.copyFrom(body, from, to - from))
                                .setEndOfStream(i == ends.size() - 1))
                        .build());
                from = to;
            }
            return this;
        }

        /** The response headers, with the served endpoint in the {@code envoy.lb} metadata (null: none) and as a header. */
        Stream responseHeaders(int status, String served, boolean endOfStream) {
            ProcessingRequest.Builder b = message()
                    .setResponseHeaders(HttpHeaders.newBuilder()
                            .setHeaders(headerMap(
                                    served == null
                                            ? Map.of(":status", "" + status, "content-type", "application/json")
                                            : Map.of(
                                                    ":status",
                                                    "" + status,
                                                    "content-type",
                                                    "application/json",
                                                    Wire.SERVED,
                                                    served)))
                            .setEndOfStream(endOfStream));
            if (served != null) {
                b.setMetadataContext(Metadata.newBuilder()
                        .putFilterMetadata(
                                Wire.LB_NAMESPACE,
                                Wire.metadata(Wire.LB_NAMESPACE, Wire.SERVED, served)
                                        .getFieldsOrThrow(Wire.LB_NAMESPACE)
                                        .getStructValue()));
            }
            out.onNext(b.build());
            return this;
        }

        Stream responseBody(String chunk, boolean endOfStream) {
            out.onNext(message()
                    .setResponseBody(HttpBody.newBuilder()
                            .setBody(ByteString.copyFromUtf8(chunk))
                            .setEndOfStream(endOfStream))
                    .build());
            return this;
        }

        Stream requestTrailers() {
            out.onNext(message()
                    .setRequestTrailers(HttpTrailers.getDefaultInstance())
                    .build());
            return this;
        }

        /** The next answer (waiting up to 60 s). */
        ProcessingResponse next() throws InterruptedException {
            Object o = answers.poll(60, TimeUnit.SECONDS);
            assertNotNull(o, "no answer within 60 s");
            if (o instanceof ProcessingResponse r) {
                return r;
            }
            throw new AssertionError("the stream ended instead of answering: " + o);
        }

        /** The body chunks answered until one ends the stream, concatenated; each is checked to be <= 62,000 bytes. */
        byte[] echoedBody(boolean request) throws InterruptedException {
            ByteString all = ByteString.EMPTY;
            while (true) {
                ProcessingResponse r = next();
                var body = request ? r.getRequestBody() : r.getResponseBody();
                if (!(request ? r.hasRequestBody() : r.hasResponseBody())) {
                    throw new AssertionError("expected a body chunk, got " + r);
                }
                var s = body.getResponse().getBodyMutation().getStreamedResponse();
                if (s.getBody().size() > Wire.MAX_CHUNK) {
                    throw new AssertionError("a chunk of " + s.getBody().size() + " bytes");
                }
                all = all.concat(s.getBody());
                if (s.getEndOfStream()) {
                    return all.toByteArray();
                }
            }
        }

        void end() {
            out.onCompleted();
        }

        void reset() {
            out.onError(new RuntimeException("the client went away"));
        }
    }

    static HeaderMap headerMap(Map<String, String> headers) {
        HeaderMap.Builder m = HeaderMap.newBuilder();
        headers.forEach((k, v) -> m.addHeaders(
                HeaderValue.newBuilder().setKey(k).setRawValue(ByteString.copyFrom(v, StandardCharsets.UTF_8))));
        return m.build();
    }

    /** The destination header of a request-headers answer (null if it sets none). */
    static String destination(ProcessingResponse r) {
        for (var h : r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
            if (h.getHeader().getKey().equals(Wire.DESTINATION)) {
                return h.getHeader().getRawValue().toStringUtf8();
            }
        }
        return null;
    }

    /** The destination in the answer's dynamic metadata (null if absent). */
    static String metadataDestination(ProcessingResponse r) {
        var ns = r.getDynamicMetadata().getFieldsMap().get(Wire.LB_NAMESPACE);
        if (ns == null) {
            return null;
        }
        var v = ns.getStructValue().getFieldsMap().get(Wire.DESTINATION);
        return v == null ? null : v.getStringValue();
    }
}
