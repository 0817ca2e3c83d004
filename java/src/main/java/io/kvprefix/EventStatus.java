package io.kvprefix;

/**
 * The outcome of applying one {@link KvEvent} (docs/SPEC.md sections 3 and 5). An event is applied
 * whole or not at all: every status except {@link #OK} and {@link #BLOCK_NOT_FOUND} means the index
 * is unchanged.
 *
 * <p>Thread-safety: an immutable enum.
 */
public enum EventStatus {
    /** Applied. */
    OK("ok"),
    /** A {@code stored} event names a parent this worker does not hold; nothing applied. */
    PARENT_BLOCK_NOT_FOUND("parent_block_not_found"),
    /** A {@code removed} event named at least one hash the worker does not hold; the known ones were removed. */
    BLOCK_NOT_FOUND("block_not_found"),
    /** A {@code stored} event repeats an engine hash, or contains its own parent; nothing applied. */
    INVALID_BLOCK_SEQUENCE("invalid_block_sequence"),
    /** The memory budget or the worker slots are exhausted; nothing applied. */
    CAPACITY_EXCEEDED("capacity_exceeded"),
    /** The event is malformed; nothing applied. */
    INVALID_INPUT("invalid_input");

    private final String wireName;

    EventStatus(String wireName) {
        this.wireName = wireName;
    }

    /** The status as the op-stream format writes it, such as {@code parent_block_not_found}. */
    public String wireName() {
        return wireName;
    }

    /** The status with this wire name. */
    public static EventStatus fromWireName(String name) {
        for (EventStatus s : values()) {
            if (s.wireName.equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown event status '" + name + "'");
    }
}
