package io.kvprefix.tokenizer.internal.local;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Tokenizes a rendered prompt segment by segment (docs/TOKENIZER.md section 6): the text is split at
 * the added tokens (HuggingFace tokenizers split there first and never merge across them, matching
 * leftmost-longest), each added token is its own id, and each piece between them is encoded alone
 * and cached by its text and whether it is the first piece (what a prepend-space normaliser would
 * treat differently). So the 10th turn of a conversation encodes only what is new. The cache holds
 * at most {@code maxEntries} pieces and about {@code maxBytes} bytes, least recently used first out,
 * in 16 independently locked shards.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class SegmentCache {
    /** The encoder of one piece of text without added special tokens. */
    @FunctionalInterface
    public interface Encoder {
        int[] encode(String piece);
    }

    private static final int SHARDS = 16;
    private static final int ENTRY_OVERHEAD = 96;

    private final Map<Character, List<TokenizerFiles.AddedToken>> byFirstChar = new HashMap<>();
    private final Shard[] shards = new Shard[SHARDS];
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    private record Key(String text, boolean first) {}

    /** A cache over these added tokens (only those with no lstrip, rstrip, single-word or normalized flag). */
    public SegmentCache(List<TokenizerFiles.AddedToken> addedTokens, int maxEntries, long maxBytes) {
        for (var t : addedTokens) {
            if (!t.content().isEmpty()) {
                byFirstChar
                        .computeIfAbsent(t.content().charAt(0), k -> new ArrayList<>())
                        .add(t);
            }
        }
        byFirstChar
                .values()
                .forEach(l -> l.sort(Comparator.comparingInt(
                                (TokenizerFiles.AddedToken t) -> t.content().length())
                        .reversed()));
        for (int i = 0; i < SHARDS; i++) {
            shards[i] = new Shard(Math.max(1, maxEntries / SHARDS), Math.max(1, maxBytes / SHARDS));
        }
    }

    /** The ids of {@code text} (no post-processor tokens), piece by piece, with cached pieces reused. */
    public int[] encode(String text, Encoder encoder) {
        IntList out = new IntList(Math.max(16, text.length() / 3));
        int pieceStart = 0;
        boolean first = true;
        int i = 0;
        while (i < text.length()) {
            TokenizerFiles.AddedToken t = match(text, i);
            if (t == null) {
                i++;
                continue;
            }
            if (i > pieceStart) {
                out.addAll(piece(text.substring(pieceStart, i), first, encoder));
            }
            first = false;
            out.add(t.id());
            i += t.content().length();
            pieceStart = i;
        }
        if (pieceStart < text.length()) {
            out.addAll(piece(text.substring(pieceStart), first, encoder));
        }
        return out.toArray();
    }

    private TokenizerFiles.AddedToken match(String text, int at) {
        List<TokenizerFiles.AddedToken> candidates = byFirstChar.get(text.charAt(at));
        if (candidates != null) {
            for (var t : candidates) { // longest first
                if (text.startsWith(t.content(), at)) {
                    return t;
                }
            }
        }
        return null;
    }

    private int[] piece(String piece, boolean first, Encoder encoder) {
        Key key = new Key(piece, first);
        Shard shard = shards[(key.hashCode() & 0x7fffffff) % SHARDS];
        int[] ids = shard.get(key);
        if (ids != null) {
            hits.increment();
            return ids;
        }
        misses.increment();
        ids = encoder.encode(piece);
        shard.put(key, ids, (long) piece.length() * 2 + (long) ids.length * 4 + ENTRY_OVERHEAD);
        return ids;
    }

    /** Pieces found in the cache so far. */
    public long hits() {
        return hits.sum();
    }

    /** Pieces encoded so far. */
    public long misses() {
        return misses.sum();
    }

    /** The pieces held now. */
    public int entries() {
        int n = 0;
        for (Shard s : shards) {
            n += s.size();
        }
        return n;
    }

    /** The approximate bytes held now. */
    public long bytes() {
        long n = 0;
        for (Shard s : shards) {
            n += s.bytes();
        }
        return n;
    }

    /** One lock's worth of the cache: an access-ordered map bounded by entries and bytes. */
    private static final class Shard {
        private final int maxEntries;
        private final long maxBytes;
        private final LinkedHashMap<Key, int[]> map = new LinkedHashMap<>(64, 0.75f, true);
        private long bytes;

        Shard(int maxEntries, long maxBytes) {
            this.maxEntries = maxEntries;
            this.maxBytes = maxBytes;
        }

        synchronized int[] get(Key k) {
            return map.get(k);
        }

        synchronized void put(Key k, int[] ids, long size) {
            if (size > maxBytes) {
                return; // larger than the shard: not worth evicting everything for
            }
            int[] old = map.put(k, ids);
            if (old != null) {
                bytes -= cost(k, old);
            }
            bytes += size;
            var it = map.entrySet().iterator();
            while ((map.size() > maxEntries || bytes > maxBytes) && it.hasNext()) {
                var e = it.next();
                bytes -= cost(e.getKey(), e.getValue());
                it.remove();
            }
        }

        private static long cost(Key k, int[] ids) {
            return (long) k.text().length() * 2 + (long) ids.length * 4 + ENTRY_OVERHEAD;
        }

        synchronized int size() {
            return map.size();
        }

        synchronized long bytes() {
            return bytes;
        }
    }

    /** A growable int array. */
    private static final class IntList {
        private int[] a;
        private int n;

        IntList(int capacity) {
            a = new int[capacity];
        }

        void add(int v) {
            if (n == a.length) {
                a = java.util.Arrays.copyOf(a, a.length * 2);
            }
            a[n++] = v;
        }

        void addAll(int[] v) {
            if (n + v.length > a.length) {
                a = java.util.Arrays.copyOf(a, Math.max(a.length * 2, n + v.length));
            }
            System.arraycopy(v, 0, a, n, v.length);
            n += v.length;
        }

        int[] toArray() {
            return java.util.Arrays.copyOf(a, n);
        }
    }
}
