package io.kvprefix.epp.internal;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The names and messages of the endpoint-picker protocol (docs/EPP.md section 2): the GIE header and
 * metadata keys, reading headers and metadata out of Envoy's requests, and building the responses.
 *
 * <p>Thread-safety: stateless; every method is thread-safe.
 */
public final class Wire {
    /** The request header (and metadata key) naming the destination, an ordered list {@code ip:port,ip:port}. */
    public static final String DESTINATION = "x-gateway-destination-endpoint";
    /** The metadata namespace of the destination (and of the served endpoint). */
    public static final String LB_NAMESPACE = "envoy.lb";
    /** The metadata key (and response header) naming the endpoint that served. */
    public static final String SERVED = "x-gateway-destination-endpoint-served";
    /** The metadata namespace of the subset hint. */
    public static final String SUBSET_NAMESPACE = "envoy.lb.subset_hint";
    /** The metadata key of the subset hint: the endpoints the picker may choose among. */
    public static final String SUBSET = "x-gateway-destination-endpoint-subset";
    /** The largest body chunk sent back: some Envoy builds cap a streamed chunk at 64 KiB. */
    public static final int MAX_CHUNK = 62_000;
    /** The ext_proc service's name, as gRPC health knows it. */
    public static final String EXT_PROC_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

    private Wire() {}

    /** The first value of header {@code name} (lower case), from {@code value} or else {@code raw_value}; null if absent. */
    public static String header(HeaderMap headers, String name) {
        for (HeaderValue h : headers.getHeadersList()) {
            if (h.getKey().toLowerCase(Locale.ROOT).equals(name)) {
                return h.getValue().isEmpty() ? h.getRawValue().toString(StandardCharsets.UTF_8) : h.getValue();
            }
        }
        return null;
    }

    /**
     * The endpoints a metadata field names: a list of strings, or one string of comma-separated
     * endpoints; null when the field is absent.
     */
    public static List<String> endpoints(Metadata md, String namespace, String key) {
        Struct ns = md.getFilterMetadataMap().get(namespace);
        if (ns == null || !ns.containsFields(key)) {
            return null;
        }
        Value v = ns.getFieldsOrThrow(key);
        List<String> out = new ArrayList<>();
        if (v.hasListValue()) {
            for (Value e : v.getListValue().getValuesList()) {
                split(e.getStringValue(), out);
            }
        } else {
            split(v.getStringValue(), out);
        }
        return out;
    }

    private static void split(String s, List<String> out) {
        for (String p : s.split(",")) {
            if (!p.isBlank()) {
                out.add(p.strip());
            }
        }
    }

    /** A metadata struct {@code {namespace: {key: value}}}. */
    public static Struct metadata(String namespace, String key, String value) {
        Struct inner = Struct.newBuilder()
                .putFields(key, Value.newBuilder().setStringValue(value).build())
                .build();
        return Struct.newBuilder()
                .putFields(namespace, Value.newBuilder().setStructValue(inner).build())
                .build();
    }

    /** A metadata struct {@code {namespace: {key: [values]}}} (the subset hint's shape). */
    public static Struct listMetadata(String namespace, String key, List<String> values) {
        ListValue.Builder l = ListValue.newBuilder();
        values.forEach(v -> l.addValues(Value.newBuilder().setStringValue(v)));
        Struct inner = Struct.newBuilder()
                .putFields(key, Value.newBuilder().setListValue(l).build())
                .build();
        return Struct.newBuilder()
                .putFields(namespace, Value.newBuilder().setStructValue(inner).build())
                .build();
    }

    /** A header to set, overwriting any copy, as {@code raw_value} (what Envoy sends and takes). */
    public static HeaderValueOption set(String name, String value) {
        return HeaderValueOption.newBuilder()
                .setHeader(HeaderValue.newBuilder().setKey(name).setRawValue(ByteString.copyFromUtf8(value)))
                .setAppendAction(HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD)
                .build();
    }

    /** The request-headers answer that names the destination: header, {@code clear_route_cache}, and the metadata beside it. */
    public static ProcessingResponse destination(String endpoints) {
        CommonResponse common = CommonResponse.newBuilder()
                .setHeaderMutation(HeaderMutation.newBuilder().addSetHeaders(set(DESTINATION, endpoints)))
                .setClearRouteCache(true)
                .build();
        return ProcessingResponse.newBuilder()
                .setRequestHeaders(HeadersResponse.newBuilder().setResponse(common))
                .setDynamicMetadata(metadata(LB_NAMESPACE, DESTINATION, endpoints))
                .build();
    }

    /** As {@link #destination}, on the body answer (a body not streamed full duplex: the headers went on already). */
    public static ProcessingResponse destinationOnBody(String endpoints) {
        CommonResponse common = CommonResponse.newBuilder()
                .setHeaderMutation(HeaderMutation.newBuilder().addSetHeaders(set(DESTINATION, endpoints)))
                .setClearRouteCache(true)
                .build();
        return ProcessingResponse.newBuilder()
                .setRequestBody(BodyResponse.newBuilder().setResponse(common))
                .setDynamicMetadata(metadata(LB_NAMESPACE, DESTINATION, endpoints))
                .build();
    }

    /** An empty request-headers answer (continue unchanged). */
    public static ProcessingResponse requestHeadersContinue() {
        return ProcessingResponse.newBuilder()
                .setRequestHeaders(HeadersResponse.newBuilder().setResponse(CommonResponse.getDefaultInstance()))
                .build();
    }

    /** The response-headers answer: {@code set} added, {@code remove} taken away. */
    public static ProcessingResponse responseHeaders(Map<String, String> set, List<String> remove) {
        HeaderMutation.Builder m = HeaderMutation.newBuilder().addAllRemoveHeaders(remove);
        set.forEach((k, v) -> m.addSetHeaders(set(k, v)));
        return ProcessingResponse.newBuilder()
                .setResponseHeaders(HeadersResponse.newBuilder()
                        .setResponse(CommonResponse.newBuilder().setHeaderMutation(m)))
                .build();
    }

    /** One body chunk sent back in full-duplex mode, on the request ({@code request} true) or the response side. */
    public static ProcessingResponse chunk(boolean request, ByteString body, boolean endOfStream) {
        BodyResponse b = BodyResponse.newBuilder()
                .setResponse(CommonResponse.newBuilder()
                        .setBodyMutation(BodyMutation.newBuilder()
                                .setStreamedResponse(StreamedBodyResponse.newBuilder()
                                        .setBody(body)
                                        .setEndOfStream(endOfStream))))
                .build();
        ProcessingResponse.Builder r = ProcessingResponse.newBuilder();
        return (request ? r.setRequestBody(b) : r.setResponseBody(b)).build();
    }

    /** The chunks of {@code body}, each at most {@link #MAX_CHUNK} bytes, the last one carrying {@code endOfStream}. */
    public static List<ProcessingResponse> chunks(boolean request, ByteString body, boolean endOfStream) {
        List<ProcessingResponse> out = new ArrayList<>();
        int n = body.size();
        for (int off = 0; off < n || out.isEmpty(); off += MAX_CHUNK) {
            int end = Math.min(n, off + MAX_CHUNK);
            out.add(chunk(request, body.substring(off, end), endOfStream && end == n));
        }
        return out;
    }

    /** A body answer that lets the chunk pass unchanged (a body mode other than full duplex). */
    public static ProcessingResponse bodyContinue(boolean request) {
        BodyResponse b = BodyResponse.newBuilder()
                .setResponse(CommonResponse.getDefaultInstance())
                .build();
        ProcessingResponse.Builder r = ProcessingResponse.newBuilder();
        return (request ? r.setRequestBody(b) : r.setResponseBody(b)).build();
    }

    /** A trailers answer that lets them pass, on the request or the response side. */
    public static ProcessingResponse trailersContinue(boolean request) {
        TrailersResponse t = TrailersResponse.getDefaultInstance();
        ProcessingResponse.Builder r = ProcessingResponse.newBuilder();
        return (request ? r.setRequestTrailers(t) : r.setResponseTrailers(t)).build();
    }

    /** An answer Envoy sends the client itself: {@code status} with a JSON body. */
    public static ProcessingResponse immediate(int status, byte[] json, String details) {
        StatusCode code = StatusCode.forNumber(status);
        return ProcessingResponse.newBuilder()
                .setImmediateResponse(ImmediateResponse.newBuilder()
                        .setStatus(HttpStatus.newBuilder()
                                .setCode(
                                        code == null || code == StatusCode.UNRECOGNIZED
                                                ? StatusCode.InternalServerError
                                                : code))
                        .setHeaders(HeaderMutation.newBuilder().addSetHeaders(set("content-type", "application/json")))
                        .setBody(ByteString.copyFrom(json))
                        .setDetails(details))
                .build();
    }
}
