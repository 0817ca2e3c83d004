package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a line is (docs/SPEC.md section 5, "Lines"), as every reader of the format sees it. */
class OpStreamReaderTest {
    private static final String MATCH = "{\"op\":\"match\",\"local_hashes\":[7]}";

    private static List<Op> read(byte[] bytes, int maxLineBytes) throws IOException {
        // One byte per read: every line crosses reads, so the buffering cannot hide a split.
        InputStream in = new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 1));
            }
        };
        OpStreamReader r = new OpStreamReader(in).maxLineBytes(maxLineBytes);
        List<Op> ops = new ArrayList<>();
        for (Op op; (op = r.next()) != null; ) {
            ops.add(op);
        }
        assertEquals(ops.size(), r.lines());
        assertNull(r.next(), "the end stays the end");
        return ops;
    }

    private static List<Op> read(String text) throws IOException {
        return read(text.getBytes(StandardCharsets.UTF_8), OpStreamReader.DEFAULT_MAX_LINE_BYTES);
    }

    @Test
    void aLoneCarriageReturnIsWhitespaceInsideTheLineNotAnEndOfLine() throws IOException {
        List<Op> ops = read("{\"op\":\"match\",\r\"local_hashes\":[7]}\r\n" + MATCH + "\r" + MATCH + "\n");
        assertEquals(2, ops.size(), ops.toString());
        assertInstanceOf(Op.HashMatch.class, ops.get(0), ops.toString());
        // The second line is two objects with a \r between them: one line, and not an op.
        assertTrue(ops.get(1) instanceof Op.Invalid i && i.reason().contains("trailing data"), ops.toString());
    }

    @Test
    void aLastLineWithoutNewlineCountsAndAnEmptyInputHasNoLines() throws IOException {
        assertEquals(List.of(), read(""));
        assertEquals(2, read(MATCH + "\n" + MATCH).size());
        assertEquals(3, read("\n\n" + MATCH).size(), "blank lines are lines (invalid ones)");
        assertInstanceOf(Op.Invalid.class, read("\n").get(0));
    }

    @Test
    void invalidUtf8ReachesTheParserAsBytesAndIsRejected() throws IOException {
        byte[] line = "{\"op\":\"match\",\"local_hashes\":[7],\"x\":\"\u00e9\"}\n".getBytes(StandardCharsets.UTF_8);
        byte[] bad = line.clone();
        bad[bad.length - 4] = (byte) 0xC3; // a lead byte followed by '"': not UTF-8
        bad[bad.length - 3] = '"';
        bad[bad.length - 2] = '}';
        bad[bad.length - 1] = '\n';
        assertInstanceOf(Op.HashMatch.class, read(line, 1 << 20).get(0));
        Op op = read(bad, 1 << 20).get(0);
        assertTrue(op instanceof Op.Invalid i && i.reason().contains("UTF-8"), op.toString());
    }

    @Test
    void aLineOverTheLimitIsInvalidAndTheNextLineIsReadAsUsual() throws IOException {
        String longLine = "{\"op\":\"match\",\"local_hashes\":[" + "7,".repeat(100) + "7]}";
        int limit = MATCH.length();
        List<Op> ops = read(
                (MATCH + "\n" + longLine + "\n" + MATCH + "\n" + longLine).getBytes(StandardCharsets.UTF_8), limit);
        assertEquals(4, ops.size(), ops.toString());
        assertInstanceOf(Op.HashMatch.class, ops.get(0));
        assertEquals(new Op.Invalid("the line is longer than " + limit + " bytes (not read)"), ops.get(1));
        assertInstanceOf(Op.HashMatch.class, ops.get(2));
        assertInstanceOf(Op.Invalid.class, ops.get(3), "a last overlong line without newline");
        assertEquals(1, read(MATCH.getBytes(StandardCharsets.UTF_8), limit).size(), "exactly the limit is fine");
    }

    @Test
    void theLimitIsChecked() {
        OpStreamReader r = new OpStreamReader(InputStream.nullInputStream());
        assertThrows(IllegalArgumentException.class, () -> r.maxLineBytes(0));
        assertThrows(IllegalArgumentException.class, () -> r.maxLineBytes(OpStreamReader.MAX_LINE_BYTES_LIMIT + 1));
    }
}
