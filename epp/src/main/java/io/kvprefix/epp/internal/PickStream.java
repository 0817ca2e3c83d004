package io.kvprefix.epp.internal;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;
import io.kvprefix.Worker;
import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.ServiceException;
import java.util.List;

/**
 * One ext_proc stream, which is one request through the gateway (docs/EPP.md section 2): the request
 * headers, the body buffered as it streams in, the pick once it is whole ({@link Pick}), the
 * destination sent on the headers answer and the body sent back after it in chunks of at most 62,000
 * bytes; then the response side: the served endpoint read (and its header stripped), the first body
 * chunk ending the prefill, the end of the response ending the request, a reset cancelling it.
 *
 * <p>Thread-safety: gRPC delivers one stream's messages one at a time; every answer is sent from
 * the thread that delivers, so the answers are ordered as the protocol wants.
 */
final class PickStream implements StreamObserver<ProcessingRequest> {
    private final Pick pick;
    private final StreamObserver<ProcessingResponse> out;
    private final EppMeters meters;
    private final long maxBody;
    private BodySendMode requestMode = BodySendMode.FULL_DUPLEX_STREAMED;
    private BodySendMode responseMode = BodySendMode.FULL_DUPLEX_STREAMED;
    private String method = "POST";
    private String path = "/";
    private List<String> subset;
    private ByteString body = ByteString.EMPTY;
    private boolean bodyEnded;
    private boolean picked;
    private boolean failed;
    private boolean responseSeen;
    private long startNanos;
    private RoutedRequest routed;

    PickStream(Pick pick, StreamObserver<ProcessingResponse> out, EppMeters meters, long maxBody) {
        this.pick = pick;
        this.out = out;
        this.meters = meters;
        this.maxBody = maxBody;
        meters.opened();
    }

    @Override
    public void onNext(ProcessingRequest req) {
        if (req.hasProtocolConfig()) {
            requestMode = req.getProtocolConfig().getRequestBodyMode();
            responseMode = req.getProtocolConfig().getResponseBodyMode();
        }
        if (failed) {
            return; // an immediate response went: Envoy ends the stream
        }
        switch (req.getRequestCase()) {
            case REQUEST_HEADERS -> requestHeaders(req);
            case REQUEST_BODY -> requestBody(req.getRequestBody());
            case REQUEST_TRAILERS -> requestTrailers();
            case RESPONSE_HEADERS -> responseHeaders(req);
            case RESPONSE_BODY -> responseBody(req.getResponseBody());
            case RESPONSE_TRAILERS -> {
                end();
                out.onNext(Wire.trailersContinue(false));
            }
            default -> {}
        }
    }

    private void requestHeaders(ProcessingRequest req) {
        startNanos = System.nanoTime();
        HttpHeaders h = req.getRequestHeaders();
        String m = Wire.header(h.getHeaders(), ":method");
        String p = Wire.header(h.getHeaders(), ":path");
        method = m == null ? "POST" : m;
        path = p == null ? "/" : p.indexOf('?') >= 0 ? p.substring(0, p.indexOf('?')) : p;
        subset = Wire.endpoints(req.getMetadataContext(), Wire.SUBSET_NAMESPACE, Wire.SUBSET);
        if (h.getEndOfStream() || requestMode == BodySendMode.NONE) {
            bodyEnded = h.getEndOfStream();
            choose(true);
        } else if (requestMode != BodySendMode.FULL_DUPLEX_STREAMED) {
            out.onNext(Wire.requestHeadersContinue()); // buffered: the body comes after this answer
        }
    }

    private void requestBody(HttpBody b) {
        if (picked) {
            out.onNext(
                    requestMode == BodySendMode.FULL_DUPLEX_STREAMED
                            ? Wire.chunk(true, b.getBody(), b.getEndOfStream())
                            : Wire.bodyContinue(true));
            return;
        }
        if ((long) body.size() + b.getBody().size() > maxBody) {
            refuse(pick.tooLarge());
            return;
        }
        body = body.concat(b.getBody());
        if (b.getEndOfStream()) {
            bodyEnded = true;
            choose(requestMode == BodySendMode.FULL_DUPLEX_STREAMED);
            if (!failed && requestMode == BodySendMode.FULL_DUPLEX_STREAMED) {
                Wire.chunks(true, body, true).forEach(out::onNext);
            }
        }
    }

    private void requestTrailers() {
        if (!picked && requestMode == BodySendMode.FULL_DUPLEX_STREAMED) {
            choose(true);
            if (failed) {
                return;
            }
            Wire.chunks(true, body, false).forEach(out::onNext);
        }
        out.onNext(Wire.trailersContinue(true));
    }

    /** Picks, then answers: the destination on the headers answer (or the body's), or an immediate error. */
    private void choose(boolean onHeaders) {
        picked = true;
        try {
            Pick.Choice c = pick.choose(method, path, body.toByteArray(), subset);
            routed = c.routed();
            out.onNext(onHeaders ? Wire.destination(c.endpoints()) : Wire.destinationOnBody(c.endpoints()));
            meters.picked("picked", System.nanoTime() - startNanos);
        } catch (ServiceException e) {
            refuse(e);
        }
    }

    private void refuse(ServiceException e) {
        failed = true;
        String result = e.status() == 429 ? "shed" : e.status() == 503 ? "no_endpoint" : "rejected";
        meters.picked(result, System.nanoTime() - startNanos);
        out.onNext(Wire.immediate(e.status(), e.toJsonBytes(), "kvprefix_" + e.code()));
    }

    private void responseHeaders(ProcessingRequest req) {
        responseSeen = true;
        HttpHeaders h = req.getResponseHeaders();
        List<String> served = Wire.endpoints(req.getMetadataContext(), Wire.LB_NAMESPACE, Wire.SERVED);
        String header = Wire.header(h.getHeaders(), Wire.SERVED);
        String ep = served != null && !served.isEmpty() ? served.get(0) : header;
        if (routed != null && ep != null) {
            served(ep);
        }
        java.util.Map<String, String> add = java.util.Map.of();
        if (routed != null) {
            String status = Wire.header(h.getHeaders(), ":status");
            routed.responseStarted(parseStatus(status), Wire.header(h.getHeaders(), "content-type"));
            add = routed.headers();
        }
        if (h.getEndOfStream()) {
            end();
        }
        out.onNext(Wire.responseHeaders(add, List.of(Wire.SERVED)));
    }

    private void served(String endpoint) {
        Worker w = pick.endpoints().worker(endpoint);
        if (w == null) {
            meters.served("unknown");
        } else if (w.equals(routed.worker())) {
            meters.served("first");
        } else {
            meters.served("fallback");
            try {
                routed = routed.servedBy(w);
            } catch (ServiceException e) {
                routed = null; // not an engine routed to now: the load was released
            }
        }
    }

    private void responseBody(HttpBody b) {
        if (routed != null) {
            routed.firstByte();
            byte[] bytes = b.getBody().toByteArray();
            routed.responseBytes(bytes, 0, bytes.length);
        }
        if (b.getEndOfStream()) {
            end(); // before the answer: whoever sees the answer sees the load released
        }
        if (responseMode == BodySendMode.FULL_DUPLEX_STREAMED) {
            Wire.chunks(false, b.getBody(), b.getEndOfStream()).forEach(out::onNext);
        } else {
            out.onNext(Wire.bodyContinue(false));
        }
    }

    private static int parseStatus(String s) {
        try {
            return s == null ? 200 : Integer.parseInt(s.strip());
        } catch (NumberFormatException e) {
            return 200;
        }
    }

    /** The response is over: the request is done. */
    private void end() {
        if (routed != null) {
            routed.firstByte();
            routed.completed();
        }
    }

    @Override
    public void onError(Throwable t) {
        if (routed != null) {
            routed.cancelled(); // the stream was reset: the client or the gateway gave up
        }
        meters.closed();
    }

    @Override
    public void onCompleted() {
        if (routed != null && !routed.isDone()) {
            if (responseSeen) {
                end();
            } else {
                routed.cancelled();
            }
        }
        meters.closed();
        out.onCompleted();
    }
}
