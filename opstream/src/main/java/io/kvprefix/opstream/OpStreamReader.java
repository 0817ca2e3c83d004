package io.kvprefix.opstream;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * Reads an op stream line by line and parses each line (docs/SPEC.md section 5, "Lines"): only
 * {@code \n} ends a line ({@code \r} stays in it, where JSON treats it as whitespace); a last line
 * without {@code \n} is still a line; an empty input has no lines. The bytes of a line go to the
 * parser as they are, never through a character decoder, so invalid UTF-8 is judged by the parser.
 *
 * <p>It streams in constant memory: one read buffer that grows to the longest line seen. A line
 * longer than {@link #maxLineBytes(int)} comes out as {@link Op.Invalid} and its bytes are skipped
 * without being buffered. Every reader of the format ({@link Replayer}, the benchmarks' loader,
 * {@code kvprefix footprint --ops}) reads through this class, so they all agree on what a line is.
 *
 * <p>Thread-safety: not thread-safe; one reader per stream and thread.
 */
public final class OpStreamReader {
    /** Default longest line: 64 MiB. */
    public static final int DEFAULT_MAX_LINE_BYTES = 64 << 20;
    /** The longest line limit that can be set: {@value}. */
    public static final int MAX_LINE_BYTES_LIMIT = Integer.MAX_VALUE - 16;

    private static final int INITIAL_BUFFER = 256 << 10;

    private final InputStream in;
    private final OpStreamParser parser = new OpStreamParser();
    private int maxLineBytes = DEFAULT_MAX_LINE_BYTES;
    private Runnable beforeBlockingRead = () -> {};
    private byte[] buf = new byte[0];
    private int start; // first byte of the current line
    private int limit; // end of the buffered bytes
    private int scan; // where to look for the next '\n'
    private boolean overlong; // inside a line already known to be too long (its bytes are dropped)
    private boolean eof;
    private long lines;

    /** A reader of {@code in}; the caller keeps ownership of the stream (and closes it). */
    public OpStreamReader(InputStream in) {
        this.in = Objects.requireNonNull(in, "in");
    }

    /** Lines longer than this many bytes (without the {@code \n}) come out as {@link Op.Invalid}, unread. */
    public OpStreamReader maxLineBytes(int bytes) {
        maxLineBytes = checkMaxLineBytes(bytes);
        return this;
    }

    static int checkMaxLineBytes(int bytes) {
        if (bytes < 1 || bytes > MAX_LINE_BYTES_LIMIT) {
            throw new IllegalArgumentException(
                    "max line length must be in 1.." + MAX_LINE_BYTES_LIMIT + " bytes, got " + bytes);
        }
        return bytes;
    }

    /**
     * Runs {@code action} whenever the next read of the input could block (nothing is buffered and
     * the stream has nothing available): a replayer flushes its answers there, so that an
     * interactive producer sees them promptly.
     */
    public OpStreamReader beforeBlockingRead(Runnable action) {
        this.beforeBlockingRead = Objects.requireNonNull(action, "action");
        return this;
    }

    /** Lines read so far. */
    public long lines() {
        return lines;
    }

    /**
     * The next line, parsed; {@code null} at the end of the input.
     *
     * @throws IOException if reading the input fails
     */
    public Op next() throws IOException {
        if (buf.length == 0) {
            buf = new byte[(int) Math.min(INITIAL_BUFFER, maxLineBytes + 1L)];
        }
        while (true) {
            int nl = indexOfNewline(buf, scan, limit);
            if (nl >= 0) {
                Op op = overlong || nl - start > maxLineBytes ? overlongLine() : line(start, nl - start);
                overlong = false;
                start = scan = nl + 1;
                return op;
            }
            if (eof) {
                return lastLine();
            }
            fill();
        }
    }

    /** Reads more input after the buffered bytes, dropping those of an overlong line. */
    private void fill() throws IOException {
        if (overlong || limit - start > maxLineBytes) {
            overlong = true;
            start = scan = limit = 0;
        } else {
            if (start > 0) {
                System.arraycopy(buf, start, buf, 0, limit - start);
                limit -= start;
                start = 0;
            }
            scan = limit;
            if (limit == buf.length) { // the line fills the buffer but is not too long yet: grow
                buf = Arrays.copyOf(buf, (int) Math.min(buf.length * 2L, maxLineBytes + 1L));
            }
        }
        if (in.available() <= 0) {
            beforeBlockingRead.run();
        }
        int r = in.read(buf, limit, buf.length - limit);
        if (r < 0) {
            eof = true;
        } else {
            limit += r;
        }
    }

    /** At the end of the input: a last line without {@code \n}, or nothing. */
    private Op lastLine() {
        Op op = null;
        if (overlong) {
            op = overlongLine();
        } else if (limit > start) {
            op = line(start, limit - start);
        }
        overlong = false;
        start = scan = limit;
        return op;
    }

    private static int indexOfNewline(byte[] buf, int from, int to) {
        for (int i = from; i < to; i++) {
            if (buf[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private Op line(int off, int len) {
        lines++;
        return parser.parse(buf, off, len);
    }

    private Op overlongLine() {
        lines++;
        return new Op.Invalid("the line is longer than " + maxLineBytes + " bytes (not read)");
    }
}
