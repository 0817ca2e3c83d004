package io.kvprefix.workload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Reads a Mooncake trace (JSON Lines, UTF-8), one request per line:
 * <pre>{"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [id, ...]}</pre>
 *
 * <p>Which values are valid, blank lines, the order of requests and how lengths and ids relate are
 * this package's description, <em>Mooncake traces</em>. A malformed line throws
 * {@link TraceFormatException} with the file, the line number and what is wrong, for example
 * {@code conversation_trace.jsonl:17: hash_ids must be an array of non-negative integers (element 3 is
 * "x")}. A file without any request is an error too.
 *
 * <p>Thread-safety: stateless; {@link #read} may be called from any thread.
 */
public final class MooncakeTraceReader {
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();
    private static final String IDS_MESSAGE =
            "hash_ids must be an array of non-negative integers up to " + Trace.MAX_ID;

    private MooncakeTraceReader() {}

    /** Reads the trace at {@code path}; messages name the file as {@code path} was given. */
    public static Trace read(Path path) throws IOException {
        String name = path.toString();
        if (Files.isDirectory(path)) {
            throw new TraceFormatException(name, "is a directory, not a trace file");
        }
        try (InputStream in = Files.newInputStream(path)) {
            return read(in, name);
        } catch (NoSuchFileException e) {
            throw new TraceFormatException(name, "no such file");
        } catch (AccessDeniedException e) {
            throw new TraceFormatException(name, "permission denied");
        }
    }

    /** Reads a trace from {@code in} (UTF-8); {@code name} is used in messages and as the trace's source. */
    public static Trace read(InputStream in, String name) throws IOException {
        List<TraceRequest> requests = new ArrayList<>();
        LineReader lines = new LineReader(in);
        int lineNo = 0;
        while (lines.next()) {
            lineNo++;
            if (lines.isBlank()) {
                continue;
            }
            requests.add(parseLine(lines.buf, lines.len, name, lineNo));
        }
        if (requests.isEmpty()) {
            throw new TraceFormatException(
                    name, lineNo == 0 ? "the file is empty, no requests" : "no requests (only blank lines)");
        }
        // stable: equal timestamps keep file order
        requests.sort(Comparator.comparingLong(TraceRequest::timestampMs));
        List<TraceRequest> indexed = new ArrayList<>(requests.size());
        for (TraceRequest r : requests) {
            indexed.add(r.with(indexed.size(), r.hashIds()));
        }
        return new Trace(name, Trace.MOONCAKE_BLOCK_TOKENS, indexed);
    }

    /** Splits a byte stream into lines at {@code \n} (a {@code \r} before it is dropped), without decoding. */
    private static final class LineReader {
        private final InputStream in;
        private final byte[] chunk = new byte[1 << 16];
        private int pos;
        private int limit;
        private boolean eof;
        byte[] buf = new byte[1 << 12];
        int len;

        LineReader(InputStream in) {
            this.in = in;
        }

        boolean next() throws IOException {
            len = 0;
            boolean any = false;
            while (true) {
                if (pos == limit) {
                    if (eof) {
                        break;
                    }
                    limit = in.read(chunk);
                    pos = 0;
                    if (limit <= 0) {
                        limit = 0;
                        eof = true;
                        break;
                    }
                }
                any = true;
                byte b = chunk[pos++];
                if (b == '\n') {
                    if (len > 0 && buf[len - 1] == '\r') {
                        len--;
                    }
                    return true;
                }
                if (len == buf.length) {
                    buf = Arrays.copyOf(buf, len * 2);
                }
                buf[len++] = b;
            }
            if (len > 0 && buf[len - 1] == '\r') {
                len--;
            }
            return any; // a last line without a newline
        }

        boolean isBlank() {
            for (int i = 0; i < len; i++) {
                byte b = buf[i];
                if (b != ' ' && b != '\t' && b != '\r') {
                    return false;
                }
            }
            return true;
        }
    }

    /** Parses one non-blank line; index 0 (the caller renumbers). */
    static TraceRequest parseLine(byte[] line, int len, String name, int lineNo) {
        try (JsonParser p = JSON.createParser(line, 0, len)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new TraceFormatException(name, lineNo, "expected a JSON object {...}, found " + describe(p));
            }
            long timestamp = -1;
            long input = -1;
            long output = -1;
            long[] ids = null;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                switch (field) {
                    case "timestamp" -> timestamp = nonNegative(p, field, Long.MAX_VALUE, name, lineNo);
                    case "input_length" -> input = nonNegative(p, field, Integer.MAX_VALUE, name, lineNo);
                    case "output_length" -> output = nonNegative(p, field, Integer.MAX_VALUE, name, lineNo);
                    case "hash_ids" -> ids = hashIds(p, name, lineNo);
                    default -> p.skipChildren();
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new TraceFormatException(name, lineNo, "the JSON object is not closed");
            }
            JsonToken after = p.nextToken();
            if (after != null) {
                throw new TraceFormatException(
                        name, lineNo, "found " + describe(p) + " after the JSON object (one object per line)");
            }
            if (timestamp < 0) {
                throw missing("timestamp", name, lineNo);
            }
            if (input < 0) {
                throw missing("input_length", name, lineNo);
            }
            if (output < 0) {
                throw missing("output_length", name, lineNo);
            }
            if (ids == null) {
                throw missing("hash_ids", name, lineNo);
            }
            return new TraceRequest(0, timestamp, (int) input, (int) output, ids, lineNo);
        } catch (JsonProcessingException e) {
            String msg = e.getOriginalMessage();
            if (msg != null) {
                int nl = msg.indexOf('\n');
                msg = nl >= 0 ? msg.substring(0, nl) : msg;
            }
            throw new TraceFormatException(name, lineNo, "not valid JSON: " + msg);
        } catch (IOException e) {
            // parsing a String: only JSON errors are possible, but the API declares IOException
            throw new TraceFormatException(name, lineNo, "cannot parse: " + e.getMessage());
        }
    }

    private static TraceFormatException missing(String field, String name, int lineNo) {
        return new TraceFormatException(name, lineNo, "missing field \"" + field + "\"");
    }

    private static long nonNegative(JsonParser p, String field, long max, String name, int lineNo) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            long v = p.getLongValue();
            if (v >= 0 && v <= max) {
                return v;
            }
        }
        throw new TraceFormatException(
                name,
                lineNo,
                field + " must be a non-negative integer" + (max < Long.MAX_VALUE ? " up to " + max : "") + ", got "
                        + describe(p));
    }

    private static long[] hashIds(JsonParser p, String name, int lineNo) throws IOException {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new TraceFormatException(name, lineNo, IDS_MESSAGE + ", got " + describe(p));
        }
        long[] ids = new long[16];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            long v = -1;
            if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
                v = p.getLongValue();
            }
            if (v < 0 || v > Trace.MAX_ID) {
                throw new TraceFormatException(
                        name, lineNo, IDS_MESSAGE + " (element " + n + " is " + describe(p) + ")");
            }
            if (n == ids.length) {
                ids = Arrays.copyOf(ids, n * 2);
            }
            ids[n++] = v;
        }
        return Arrays.copyOf(ids, n);
    }

    /** The current token as the user wrote it, shortened: {@code "abc"}, {@code -3}, {@code null}, {@code an object}. */
    private static String describe(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            return "nothing";
        }
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> {
                String s = p.getText();
                yield "\"" + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + "\"";
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT, VALUE_TRUE, VALUE_FALSE, VALUE_NULL -> {
                String s = p.getText();
                yield s.length() > 40 ? s.substring(0, 40) + "..." : s;
            }
            default -> t.toString();
        };
    }
}
