package io.kvprefix.tokenizer.internal.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizedPrompt;
import io.kvprefix.tokenizer.TokenizerOptions;
import io.kvprefix.tokenizer.internal.Prompts;
import io.kvprefix.tokenizer.internal.template.ChatTemplate;
import io.kvprefix.tokenizer.internal.template.PyStrings;
import io.kvprefix.tokenizer.internal.template.PyValues;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The {@code local} mode: the model's chat template rendered as vLLM renders it, then HuggingFace's
 * tokenizer in process, with the segment cache when it is proven exact for this tokenizer
 * (docs/TOKENIZER.md sections 3 and 6).
 *
 * <p>Thread-safety: thread-safe.
 */
public final class LocalTokenizer implements PromptTokenizer {
    /** A template that iterates over a message's content gets it as a list of parts (vLLM's "openai" format). */
    private static final Pattern LOOPS_OVER_CONTENT =
            Pattern.compile("\\{%-?\\s*for\\s+\\w+\\s+in\\s+\\w+\\s*(\\.\\s*content|\\[\\s*['\"]content['\"]\\s*\\])");

    private final Path dir;
    private final HfTokenizer tokenizer;
    private final Map<String, ChatTemplate> templates = new LinkedHashMap<>();
    private final Map<String, Boolean> openaiFormat = new LinkedHashMap<>();
    private final Map<String, String> sources;
    private final Map<String, Object> specialTokens;
    private final SegmentCache cache;
    private final String cacheOff;
    private volatile boolean closed;

    private LocalTokenizer(Path dir, TokenizerFiles files, HfTokenizer tokenizer, TokenizerOptions options) {
        this.dir = dir;
        this.tokenizer = tokenizer;
        this.specialTokens = files.specialTokens();
        this.sources = files.chatTemplates();
        files.chatTemplates().forEach((name, source) -> {
            try {
                templates.put(name, ChatTemplate.compile(source));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        dir.resolve("tokenizer_config.json") + ": chat template " + name + ": " + e.getMessage(), e);
            }
            openaiFormat.put(name, LOOPS_OVER_CONTENT.matcher(source).find());
        });
        SegmentProof.Verdict v = SegmentProof.check(files, tokenizer, options, sample());
        this.cache = v.cache();
        this.cacheOff = v.reason();
    }

    /** Opens the model folder {@code dir}; an {@link IllegalArgumentException} says what is wrong with it. */
    public static LocalTokenizer open(Path dir, TokenizerOptions options) {
        TokenizerFiles files = TokenizerFiles.read(dir);
        HfTokenizer tokenizer = HfTokenizer.load(files.tokenizerJson());
        try {
            return new LocalTokenizer(dir, files, tokenizer, options);
        } catch (RuntimeException e) {
            tokenizer.close();
            throw e;
        }
    }

    /** A rendered sample conversation for the segment-cache proof, or null without a template. */
    private String sample() {
        ChatTemplate t = templates.get("default");
        if (t == null) {
            return null;
        }
        try {
            return render(SegmentProof.sampleChat(), "default", t);
        } catch (TokenizeException e) {
            return null;
        }
    }

    @Override
    public String mode() {
        return "local";
    }

    /** Why the segment cache is off, or null when it is on. */
    public String segmentCacheOff() {
        return cacheOff;
    }

    /** The segment cache, or null when it is off. */
    public SegmentCache segmentCache() {
        return cache;
    }

    @Override
    public TokenizedPrompt chat(ObjectNode body) throws TokenizeException {
        checkOpen();
        String name = templateName(body);
        String text = render(body, name, templates.get(name));
        boolean special = flag(body, "add_special_tokens", false);
        return new TokenizedPrompt(encode(text, special));
    }

    /** The chat body rendered by the model's template, as the text vLLM tokenizes. */
    public String renderChat(ObjectNode body) throws TokenizeException {
        String name = templateName(body);
        return render(body, name, templates.get(name));
    }

    @Override
    public TokenizedPrompt completion(ObjectNode body) throws TokenizeException {
        checkOpen();
        Prompts.Prompt p = Prompts.completionPrompt(body);
        if (p.ids() != null) {
            return new TokenizedPrompt(p.ids());
        }
        return new TokenizedPrompt(encode(p.text(), flag(body, "add_special_tokens", true)));
    }

    /** The ids of {@code text}: through the segment cache when it is on and no special tokens are added. */
    public int[] encode(String text, boolean addSpecialTokens) throws TokenizeException {
        try {
            if (cache != null && !addSpecialTokens) {
                return cache.encode(text, piece -> tokenizer.encode(piece, false));
            }
            return tokenizer.encode(text, addSpecialTokens);
        } catch (RuntimeException e) {
            throw new TokenizeException(TokenizeException.TOKENIZER_ERROR, "tokenizing failed: " + e.getMessage(), e);
        }
    }

    /** The ids of {@code text} tokenized whole, never through the cache (the proof's reference). */
    public int[] encodeWhole(String text, boolean addSpecialTokens) {
        return tokenizer.encode(text, addSpecialTokens);
    }

    private String templateName(ObjectNode body) throws TokenizeException {
        if (templates.isEmpty()) {
            throw new TokenizeException(
                    TokenizeException.NO_CHAT_TEMPLATE,
                    dir + " has no chat_template in tokenizer_config.json: chat bodies cannot be tokenized locally");
        }
        JsonNode tools = body.get("tools");
        if (tools != null && !tools.isNull() && templates.containsKey("tool_use")) {
            return "tool_use";
        }
        if (!templates.containsKey("default")) {
            throw new TokenizeException(
                    TokenizeException.NO_CHAT_TEMPLATE, dir + " has named chat templates but no \"default\" one");
        }
        return "default";
    }

    private String render(ObjectNode body, String name, ChatTemplate template) throws TokenizeException {
        Map<String, Object> vars = variables(body, name);
        String text;
        try {
            text = template.render(vars);
        } catch (ChatTemplate.RenderFailure e) {
            throw new TokenizeException(TokenizeException.TEMPLATE_ERROR, e.getMessage(), e);
        }
        if (!flag(body, "continue_final_message", false)) {
            return text;
        }
        @SuppressWarnings("unchecked")
        List<Object> messages = (List<Object>) vars.get("messages");
        return continueFinal(text, messages);
    }

    /**
     * The variables the chat template of {@code body} is rendered with, as HuggingFace's
     * {@code apply_chat_template} passes them: the special tokens, {@code chat_template_kwargs},
     * {@code messages}, {@code tools}, {@code documents}, {@code add_generation_prompt}.
     */
    public Map<String, Object> templateVariables(ObjectNode body) throws TokenizeException {
        return variables(body, templateName(body));
    }

    /** The source of the template {@code body} is rendered with, as {@code tokenizer_config.json} has it. */
    public String templateSource(ObjectNode body) throws TokenizeException {
        return sources.get(templateName(body));
    }

    private Map<String, Object> variables(ObjectNode body, String name) throws TokenizeException {
        boolean generation = flag(body, "add_generation_prompt", true);
        if (generation && flag(body, "continue_final_message", false)) { // HuggingFace refuses the pair
            throw Prompts.bad("continue_final_message needs \"add_generation_prompt\": false");
        }
        Map<String, Object> vars = new LinkedHashMap<>(specialTokens);
        vars.putAll(templateKwargs(body.get("chat_template_kwargs")));
        vars.put("messages", Conversation.messages(body.get("messages"), openaiFormat.get(name)));
        vars.put("tools", Conversation.tools(body.get("tools")));
        vars.put("documents", PyValues.of(body.get("documents")));
        vars.put("add_generation_prompt", generation);
        return vars;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> templateKwargs(JsonNode kwargs) throws TokenizeException {
        if (kwargs == null || kwargs.isNull()) {
            return Map.of();
        }
        if (!kwargs.isObject()) {
            throw Prompts.bad("\"chat_template_kwargs\" is not an object");
        }
        for (String forbidden : List.of("chat_template", "tokenize")) {
            if (kwargs.has(forbidden)) {
                throw Prompts.bad("\"chat_template_kwargs\" may not set \"" + forbidden + "\"");
            }
        }
        Map<String, Object> out = new LinkedHashMap<>((Map<String, Object>) PyValues.of(kwargs));
        for (String reserved :
                List.of("messages", "tools", "documents", "add_generation_prompt", "continue_final_message")) {
            out.remove(reserved);
        }
        return out;
    }

    /** HuggingFace's {@code continue_final_message}: the text cut right after the final message's content. */
    @SuppressWarnings("unchecked")
    private static String continueFinal(String rendered, List<Object> messages) throws TokenizeException {
        Object content = ((Map<String, Object>) messages.get(messages.size() - 1)).get("content");
        String last = null;
        if (content instanceof String s) {
            last = s;
        } else if (content instanceof List<?> parts) {
            for (int i = parts.size() - 1; i >= 0 && last == null; i--) {
                Object text = ((Map<String, Object>) parts.get(i)).get("text");
                last = text instanceof String s ? s : null;
            }
        }
        if (last == null) {
            throw Prompts.bad("continue_final_message is set but the final message has no text to continue");
        }
        String stripped = PyStrings.strip(last, null);
        int at = rendered.lastIndexOf(stripped);
        if (at < 0) {
            throw new TokenizeException(
                    TokenizeException.TEMPLATE_ERROR,
                    "continue_final_message is set but the final message does not appear in the rendered chat");
        }
        String lstripped = PyStrings.lstrip(last, null);
        if (rendered.startsWith(lstripped, at) && lstripped.equals(last)) {
            return rendered.substring(0, at + lstripped.length());
        }
        return rendered.substring(0, at + stripped.length());
    }

    private static boolean flag(ObjectNode body, String name, boolean dflt) throws TokenizeException {
        JsonNode v = body.get(name);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw Prompts.bad("\"" + name + "\" is not a boolean");
        }
        return v.booleanValue();
    }

    private void checkOpen() throws TokenizeException {
        if (closed) {
            throw new TokenizeException(TokenizeException.CLOSED, "the tokenizer for " + dir + " is closed");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            tokenizer.close();
        }
    }
}
