package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.DecodeIssue;

/**
 * The fields of one event as {@link WireReader} reads them, in either encoding (tagged array or map),
 * and the {@link WireBatch.Event} they make; the first unusable field decides the event's issue.
 *
 * <p>Thread-safety: not thread-safe; one instance per event, on the reading thread.
 */
final class WireFields {
    String type;
    long[] blockHashes;
    boolean hasParent;
    long parent;
    int[] tokenIds;
    boolean bigram;
    int blockSize = -1;
    long loraId;
    String medium;
    String loraName;
    ExtraKeys extraKeys;
    int groupIdx = -1;
    String specKind;
    String cacheSalt;
    String locality;
    long[][] mmKeys;
    int[] remainingCopyCounts;
    FieldException error;

    void fail(FieldException e) {
        if (error == null) {
            error = e;
        }
    }

    WireBatch.Event build() {
        if (error != null) {
            return new WireBatch.Bad(error.issue, (type == null ? "event" : type) + ": " + error.getMessage());
        }
        if (type == null) {
            return new WireBatch.Bad(DecodeIssue.BAD_EVENT, "event has no type tag");
        }
        return switch (type) {
            case "BlockStored" -> {
                String missing = blockHashes == null
                        ? "block_hashes"
                        : tokenIds == null ? "token_ids" : blockSize < 0 ? "block_size" : null;
                yield missing != null
                        ? new WireBatch.Bad(DecodeIssue.BAD_EVENT, "BlockStored without " + missing)
                        : new WireBatch.Stored(
                                blockHashes,
                                hasParent,
                                parent,
                                tokenIds,
                                bigram,
                                blockSize,
                                loraId,
                                medium,
                                loraName,
                                extraKeys,
                                groupIdx,
                                specKind,
                                cacheSalt,
                                mmKeys);
            }
            case "BlockRemoved" ->
                blockHashes == null
                        ? new WireBatch.Bad(DecodeIssue.BAD_EVENT, "BlockRemoved without block_hashes")
                        : new WireBatch.Removed(blockHashes, medium, groupIdx, specKind, locality, remainingCopyCounts);
            case "AllBlocksCleared" -> new WireBatch.Cleared();
            default -> new WireBatch.Bad(DecodeIssue.UNKNOWN_EVENT_TYPE, "unknown event type '" + type + "'");
        };
    }
}
