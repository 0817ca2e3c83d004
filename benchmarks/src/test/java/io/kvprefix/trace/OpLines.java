package io.kvprefix.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * A test-only reader of the op-stream lines gen-ops writes (docs/SPEC.md section 5: match and stored in
 * hash or token form, removed), written independently of the writer so tests read what is actually
 * in the stream.
 *
 * <p>Thread-safety: stateless.
 */
final class OpLines {
    private static final JsonFactory JSON = new JsonFactory();

    private OpLines() {}

    /** One parsed line: a match ({@code localHashes} or {@code tokens} set) or an event. */
    record Op(long[] localHashes, int[] tokens, int blockSize, KvEvent event) {
        boolean isMatch() {
            return event == null;
        }
    }

    static List<Op> parse(String stream) {
        List<Op> out = new ArrayList<>();
        if (stream.isEmpty()) {
            return out;
        }
        if (!stream.endsWith("\n")) {
            throw new AssertionError("the stream does not end with a newline");
        }
        for (String line : stream.split("\n", -1)) {
            if (!line.isEmpty()) {
                out.add(parseLine(line));
            }
        }
        return out;
    }

    static Op parseLine(String line) {
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new AssertionError("not an object: " + line);
            }
            String op = null;
            long worker = -1;
            int rank = -1;
            boolean hasParentField = false;
            OptionalLong parent = OptionalLong.empty();
            List<long[]> blocks = null;
            long[] blockHashes = null;
            long[] localHashes = null;
            int[] tokens = null;
            int blockSize = -1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                JsonToken v = p.nextToken();
                switch (f) {
                    case "op" -> op = p.getText();
                    case "worker" -> worker = Long.parseUnsignedLong(p.getText());
                    case "dp_rank" -> rank = Integer.parseInt(p.getText());
                    case "parent_hash" -> {
                        hasParentField = true;
                        parent = v == JsonToken.VALUE_NULL
                                ? OptionalLong.empty()
                                : OptionalLong.of(Long.parseUnsignedLong(p.getText()));
                    }
                    case "blocks" -> {
                        blocks = new ArrayList<>();
                        while (p.nextToken() == JsonToken.START_OBJECT) {
                            long e = 0, l = 0;
                            int seen = 0;
                            while (p.nextToken() == JsonToken.FIELD_NAME) {
                                String bf = p.currentName();
                                p.nextToken();
                                if (bf.equals("block_hash")) {
                                    e = Long.parseUnsignedLong(p.getText());
                                    seen |= 1;
                                } else if (bf.equals("tokens_hash")) {
                                    l = Long.parseUnsignedLong(p.getText());
                                    seen |= 2;
                                } else {
                                    throw new AssertionError("unexpected block field " + bf + ": " + line);
                                }
                            }
                            if (seen != 3) {
                                throw new AssertionError("incomplete block: " + line);
                            }
                            blocks.add(new long[] {e, l});
                        }
                    }
                    case "block_hashes" -> blockHashes = longs(p);
                    case "local_hashes" -> localHashes = longs(p);
                    case "token_ids" -> {
                        long[] t = longs(p);
                        tokens = new int[t.length];
                        for (int i = 0; i < t.length; i++) {
                            tokens[i] = (int) t[i];
                        }
                    }
                    case "block_size" -> blockSize = p.getIntValue();
                    default -> throw new AssertionError("unexpected field " + f + ": " + line);
                }
            }
            if (p.nextToken() != null) {
                throw new AssertionError("trailing data: " + line);
            }
            Worker w = Worker.of(worker, rank);
            switch (op) {
                case "match" -> {
                    return new Op(localHashes, tokens, blockSize, null);
                }
                case "stored" -> {
                    if (!hasParentField) {
                        throw new AssertionError("gen-ops always writes parent_hash: " + line);
                    }
                    if (blocks != null) {
                        long[] e = new long[blocks.size()], l = new long[blocks.size()];
                        for (int i = 0; i < e.length; i++) {
                            e[i] = blocks.get(i)[0];
                            l[i] = blocks.get(i)[1];
                        }
                        return new Op(null, null, 0, new KvEvent.Stored(w, parent, e, l));
                    }
                    return new Op(
                            null,
                            null,
                            0,
                            new KvEvent.StoredTokens(w, parent, tokens, blockSize, blockHashes, null, null));
                }
                case "removed" -> {
                    return new Op(null, null, 0, new KvEvent.Removed(w, blockHashes));
                }
                default -> throw new AssertionError("unexpected op " + op + ": " + line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long[] longs(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new AssertionError("expected an array, found " + p.currentToken());
        }
        long[] a = new long[16];
        int n = 0;
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (n == a.length) {
                a = java.util.Arrays.copyOf(a, n * 2);
            }
            a[n++] = Long.parseUnsignedLong(p.getText());
        }
        return java.util.Arrays.copyOf(a, n);
    }
}
