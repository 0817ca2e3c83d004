package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import java.util.Arrays;

/**
 * One generation request in flight between its HTTP response and the engine: hears the engine
 * (from the engine thread) and writes the answer on the connection's context, streamed as vLLM's
 * serving code streams it (one {@code data: {json}\n\n} event per token, the usage chunk if asked,
 * then {@code data: [DONE]\n\n}) or as one body at the end. A client that goes away aborts the
 * request in the engine.
 *
 * <p>Thread-safety: the engine calls the listener methods from its thread; everything they do to the
 * response runs on {@code context}.
 */
public final class Exchange implements Generation.Listener {
    /** The endpoint a request came to. */
    public enum Kind {
        COMPLETION,
        CHAT,
        GENERATE
    }

    static final Buffer DONE = Buffer.buffer("data: [DONE]\n\n");

    private final Kind kind;
    private final ApiRequests.Parsed request;
    private final VllmBodies.Head head;
    private final HttpServerResponse response;
    private final Context context;
    private final boolean promptTokensDetails;
    private final int[] output;
    private final StringBuilder text = new StringBuilder();
    private final java.util.function.IntFunction<String> detokenizer;

    /** Set on the context. */
    private int produced;

    private int cached = -1;
    private boolean ended;
    private Generation.Handle handle;

    Exchange(
            Kind kind,
            ApiRequests.Parsed request,
            VllmBodies.Head head,
            HttpServerResponse response,
            Context context,
            PromptSource tokens,
            boolean promptTokensDetails) {
        this.kind = kind;
        this.request = request;
        this.head = head;
        this.response = response;
        this.context = context;
        this.promptTokensDetails = promptTokensDetails;
        this.output = new int[request.maxTokens()];
        this.detokenizer = tokens.detokenizer();
    }

    /** The request's prompt tokens. */
    int[] prompt() {
        return request.prompt();
    }

    /** Starts the request at {@code engine}: headers at once when streaming (as uvicorn sends them), abort on close. */
    void start(Generation.Engine engine, long seed) {
        if (request.stream()) {
            response.setChunked(true).putHeader("content-type", "text/event-stream; charset=utf-8");
            response.writeHead();
        }
        handle = engine.submit(new Generation.Request(request.prompt(), request.maxTokens(), seed), this);
        response.closeHandler(v -> gone());
        if (response.closed()) {
            gone(); // the client left while the request was being read or tokenized
        }
    }

    /** The client went away: the engine aborts the request (vLLM aborts on disconnect). */
    private void gone() {
        if (!ended) {
            ended = true;
            handle.abort();
        }
    }

    @Override
    public void admitted(int cachedTokens) {
        context.runOnContext(v -> cached = cachedTokens);
    }

    @Override
    public void token(int index, int tokenId) {
        context.runOnContext(v -> onToken(index, tokenId));
    }

    @Override
    public void finished() {
        context.runOnContext(v -> onFinished());
    }

    private VllmBodies.Usage usage() {
        return new VllmBodies.Usage(request.prompt().length, produced, promptTokensDetails ? cached : -1);
    }

    private void onToken(int index, int tokenId) {
        if (response.closed()) {
            gone();
        }
        if (ended) {
            return;
        }
        output[index] = tokenId;
        produced = index + 1;
        String piece = kind == Kind.GENERATE ? "" : detokenizer.apply(tokenId);
        text.append(piece);
        if (!request.stream()) {
            return;
        }
        if (kind == Kind.CHAT && index == 0) {
            event(VllmBodies.chatRoleChunk(head, continuous(0)));
        }
        String finish = produced == request.maxTokens() ? "length" : null;
        VllmBodies.Usage running = continuous(produced);
        event(
                switch (kind) {
                    case COMPLETION -> VllmBodies.completionChunk(head, piece, finish, running);
                    case CHAT -> VllmBodies.chatChunk(head, piece, finish, running);
                    case GENERATE -> VllmBodies.generateChunk(head.id(), tokenId, finish, running);
                });
    }

    private VllmBodies.Usage continuous(int completion) {
        return request.continuousUsage() ? new VllmBodies.Usage(request.prompt().length, completion, -1) : null;
    }

    private void onFinished() {
        if (ended) {
            return;
        }
        ended = true;
        VllmBodies.Usage u = usage();
        String finish = "length";
        if (!request.stream()) {
            ObjectNode body = switch (kind) {
                case COMPLETION -> VllmBodies.completion(head, text.toString(), finish, u);
                case CHAT -> VllmBodies.chat(head, text.toString(), finish, u);
                case GENERATE -> VllmBodies.generate(head.id(), Arrays.copyOf(output, produced), finish);
            };
            response.putHeader("content-type", "application/json").end(Json.bytes(body));
            return;
        }
        if (request.includeUsage()) {
            event(
                    switch (kind) {
                        case COMPLETION -> VllmBodies.completionUsageChunk(head, u);
                        case CHAT -> VllmBodies.chatUsageChunk(head, u);
                        // the generate endpoint reports cached tokens only when there are some
                        case GENERATE ->
                            VllmBodies.generateUsageChunk(
                                    head.id(),
                                    u.cached() == 0 ? new VllmBodies.Usage(u.prompt(), u.completion(), -1) : u);
                    });
        }
        response.end(DONE);
    }

    private void event(ObjectNode chunk) {
        Buffer b = Buffer.buffer(6 + 256);
        b.appendString("data: ").appendBuffer(Json.bytes(chunk)).appendString("\n\n");
        response.write(b);
    }
}
