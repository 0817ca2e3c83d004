package io.kvprefix.simulator;

import java.util.Locale;

/**
 * How an {@link Engine} schedules prefill and decode, by the name {@code --engine} takes. The step
 * rules are in the package description ({@code io.kvprefix.simulator}, <i>The engine model</i>).
 *
 * <p>Thread-safety: immutable (an enum).
 */
public enum EngineModel {
    /** vLLM V1 with chunked prefill: a token budget per step, running requests first. */
    VLLM_CHUNKED("vllm-chunked"),
    /** One prefill at a time per worker, first come first served, decode beside it. */
    ONE_AT_A_TIME("one-at-a-time");

    private final String key;

    EngineModel(String key) {
        this.key = key;
    }

    /** The {@code --engine} key. */
    public String key() {
        return key;
    }

    /** The model with this key. */
    public static EngineModel of(String key) {
        String k = key.strip().toLowerCase(Locale.ROOT);
        for (EngineModel m : values()) {
            if (m.key.equals(k)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown engine model '" + key + "': known are vllm-chunked, one-at-a-time");
    }
}
