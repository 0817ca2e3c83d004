package io.kvprefix.tokenizer.internal.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What local mode reads from a model's folder (docs/TOKENIZER.md section 3.1): {@code tokenizer.json}
 * (its added tokens, and the file itself for the tokenizer) and {@code tokenizer_config.json} (the
 * {@code chat_template}, a string or HuggingFace's list of named templates, and the special tokens
 * that {@code apply_chat_template} passes to the template).
 *
 * @param tokenizerJson the path of {@code tokenizer.json}
 * @param addedTokens the added tokens, in file order
 * @param chatTemplates the chat templates by name ({@code default}, {@code tool_use}, ...); empty if none
 * @param specialTokens HuggingFace's {@code special_tokens_map}: {@code bos_token} and the others that are set
 * @param hasNormalizer whether {@code tokenizer.json} has a normalizer
 *
 * <p>Thread-safety: immutable.
 */
public record TokenizerFiles(
        Path tokenizerJson,
        List<AddedToken> addedTokens,
        Map<String, String> chatTemplates,
        Map<String, Object> specialTokens,
        boolean hasNormalizer) {

    /** An added token of {@code tokenizer.json}, with the flags that decide how text around it splits. */
    public record AddedToken(
            int id,
            String content,
            boolean special,
            boolean lstrip,
            boolean rstrip,
            boolean normalized,
            boolean singleWord) {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> SPECIAL_KEYS =
            List.of("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token");

    /** Reads {@code dir}; an {@link IllegalArgumentException} names a missing or unreadable file. */
    public static TokenizerFiles read(Path dir) {
        Path tok = dir.resolve("tokenizer.json");
        Path conf = dir.resolve("tokenizer_config.json");
        JsonNode t = readJson(tok);
        JsonNode c = Files.isRegularFile(conf) ? readJson(conf) : JSON.createObjectNode();
        List<AddedToken> added = new ArrayList<>();
        for (JsonNode a : t.path("added_tokens")) {
            added.add(new AddedToken(
                    a.path("id").asInt(),
                    a.path("content").asText(),
                    a.path("special").asBoolean(false),
                    a.path("lstrip").asBoolean(false),
                    a.path("rstrip").asBoolean(false),
                    a.path("normalized").asBoolean(!a.path("special").asBoolean(false)),
                    a.path("single_word").asBoolean(false)));
        }
        boolean normalizer = t.hasNonNull("normalizer");
        return new TokenizerFiles(
                tok, List.copyOf(added), templates(c.get("chat_template"), conf), specials(c), normalizer);
    }

    private static JsonNode readJson(Path p) {
        if (!Files.isRegularFile(p)) {
            throw new IllegalArgumentException(p + ": no such file (local mode needs tokenizer.json)");
        }
        try {
            return JSON.readTree(p.toFile());
        } catch (IOException e) {
            throw new IllegalArgumentException(p + ": not readable JSON: " + e.getMessage(), e);
        }
    }

    private static Map<String, String> templates(JsonNode ct, Path conf) {
        Map<String, String> out = new LinkedHashMap<>();
        if (ct == null || ct.isNull()) {
            return out;
        }
        if (ct.isTextual()) {
            out.put("default", ct.textValue());
            return out;
        }
        if (!ct.isArray()) {
            throw new IllegalArgumentException(conf + ": chat_template is neither a string nor a list of templates");
        }
        for (JsonNode named : ct) {
            if (!named.path("name").isTextual() || !named.path("template").isTextual()) {
                throw new IllegalArgumentException(conf + ": a chat_template entry lacks a name or a template");
            }
            out.put(named.get("name").textValue(), named.get("template").textValue());
        }
        return out;
    }

    private static Map<String, Object> specials(JsonNode c) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : SPECIAL_KEYS) {
            String v = tokenText(c.get(key));
            if (v != null) {
                out.put(key, v);
            }
        }
        JsonNode extra = c.get("additional_special_tokens");
        if (extra != null && extra.isArray() && !extra.isEmpty()) {
            List<Object> list = new ArrayList<>();
            extra.forEach(e -> list.add(tokenText(e)));
            out.put("additional_special_tokens", list);
        }
        return out;
    }

    /** A special token as a string: the string itself, or an AddedToken object's {@code content}. */
    private static String tokenText(JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        return n.isTextual()
                ? n.textValue()
                : n.path("content").isTextual() ? n.get("content").textValue() : null;
    }
}
