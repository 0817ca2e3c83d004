package io.kvprefix.internal.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.Medium;
import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/SNAPSHOT.md and {@link SnapshotFormat} state the same format: every offset of the header,
 * the section table, the worker record, the name-map segment and the run record, the section types,
 * the magic, the version, and the order of the counters.
 */
class SnapshotFormatTest {
    private static String doc() throws IOException {
        return Files.readString(RepoPaths.root().resolve("docs/SNAPSHOT.md"));
    }

    /** The table rows {@code | offset | type | field ...} that follow {@code heading} in the document. */
    private static Map<String, Integer> offsets(String doc, String heading) {
        int at = doc.indexOf(heading);
        assertTrue(at >= 0, "docs/SNAPSHOT.md has no '" + heading + "'");
        Map<String, Integer> out = new LinkedHashMap<>();
        Matcher m =
                Pattern.compile("(?m)^\\| (\\d+) \\| [^|]+ \\| ([^|]+?) \\|").matcher(doc);
        m.region(at, doc.length());
        int last = -1;
        while (m.find()) {
            if (last >= 0 && doc.substring(last, m.start()).contains("\n\n")) {
                break; // the table ended
            }
            out.put(m.group(2).strip(), Integer.parseInt(m.group(1)));
            last = m.end();
        }
        return out;
    }

    @Test
    void theHeaderTableMatches() throws IOException {
        Map<String, Integer> h = offsets(doc(), "### 3.1 Header");
        Map<String, Integer> want = new LinkedHashMap<>();
        want.put("magic", 0);
        want.put("version", SnapshotFormat.H_VERSION);
        want.put("header bytes", SnapshotFormat.H_HEADER_BYTES);
        want.put("file bytes", SnapshotFormat.H_FILE_BYTES);
        want.put("block size", SnapshotFormat.H_BLOCK_SIZE);
        want.put("max workers", SnapshotFormat.H_MAX_WORKERS);
        want.put("seed", SnapshotFormat.H_SEED);
        want.put("chain seed", SnapshotFormat.H_CHAIN_SEED);
        want.put("jump size", SnapshotFormat.H_JUMP_SIZE);
        want.put("producer", SnapshotFormat.H_PRODUCER);
        want.put("sections", SnapshotFormat.H_SECTIONS);
        want.put("CRC32C", SnapshotFormat.H_CRC);
        assertEquals(want, h);
        assertTrue(doc().contains("`89 4B 56 50 0D 0A 1A 0A`"));
        assertEquals(
                List.of((byte) 0x89, (byte) 'K', (byte) 'V', (byte) 'P', (byte) 13, (byte) 10, (byte) 0x1A, (byte) 10),
                bytes(SnapshotFormat.MAGIC));
    }

    private static List<Byte> bytes(byte[] b) {
        List<Byte> out = new ArrayList<>();
        for (byte x : b) {
            out.add(x);
        }
        return out;
    }

    @Test
    void theSectionTableAndTheSectionsMatch() throws IOException {
        Map<String, Integer> t = offsets(doc(), "### 3.2 Section table");
        assertEquals(
                List.of(
                        SnapshotFormat.T_TYPE,
                        SnapshotFormat.T_ITEMS,
                        SnapshotFormat.T_OFFSET,
                        SnapshotFormat.T_LENGTH,
                        SnapshotFormat.T_CRC,
                        SnapshotFormat.T_ZERO),
                List.copyOf(t.values()));
        Matcher m = Pattern.compile("(?m)^\\| (\\d) \\| ([a-z ]+) \\| ").matcher(doc());
        Map<Integer, String> types = new LinkedHashMap<>();
        while (m.find()) {
            types.put(Integer.parseInt(m.group(1)), m.group(2));
        }
        for (int type = 1; type <= SnapshotFormat.SECTIONS; type++) {
            assertEquals(SnapshotFormat.sectionName(type), types.get(type), "section " + type);
        }
        StringBuilder order = new StringBuilder();
        for (EventStatus s : EventStatus.values()) {
            order.append(order.isEmpty() ? "" : ", ")
                    .append('`')
                    .append(s.wireName())
                    .append('`');
        }
        assertTrue(doc().contains("in this order: " + order), "the counters' order is EventStatus's: " + order);
    }

    @Test
    void theTierBitsAreMediumsOrdinals() throws IOException {
        assertEquals(List.of(Medium.GPU, Medium.CPU, Medium.DISK), List.of(Medium.values()));
        assertEquals(7, SnapshotFormat.TIERS);
        assertTrue(doc().contains("bit 0 GPU, bit 1 CPU, bit 2 DISK: `1 << Medium.ordinal()`"));
    }

    @Test
    void theRecordTablesMatch() throws IOException {
        String doc = doc();
        Map<String, Integer> w = offsets(doc, "**Worker record (" + SnapshotFormat.WORKER_BYTES + " bytes).**");
        assertEquals(
                List.of(
                        SnapshotFormat.W_ID,
                        SnapshotFormat.W_RANK,
                        SnapshotFormat.W_SLOT,
                        SnapshotFormat.W_DISTINCT,
                        SnapshotFormat.W_SEGMENTS,
                        SnapshotFormat.W_NAMES,
                        SnapshotFormat.W_EXTRA,
                        SnapshotFormat.W_UNREACHABLE,
                        SnapshotFormat.W_VIEW_OF,
                        SnapshotFormat.W_DEPTH,
                        SnapshotFormat.W_NAME_BYTES),
                List.copyOf(w.values()));
        Map<String, Integer> seg = offsets(doc, "**Name-map segment (16-byte header, then its table).**");
        assertEquals(
                List.of(
                        SnapshotFormat.S_CAPACITY,
                        SnapshotFormat.S_NAMES,
                        SnapshotFormat.S_DEPTH,
                        SnapshotFormat.S_PREFIX,
                        SnapshotFormat.SEGMENT_HEADER_BYTES),
                List.copyOf(seg.values()));
        assertTrue(doc.contains("# kvprefix snapshot format, version " + SnapshotFormat.VERSION + "\n"));
        assertTrue(doc.contains("| 8 | u32 | version | " + SnapshotFormat.VERSION + " |"));
        Map<String, Integer> r = offsets(doc, "**Run record**");
        int p = SnapshotFormat.RUN_PREFIX_BYTES;
        assertEquals(
                List.of(
                        SnapshotFormat.P_ID,
                        SnapshotFormat.P_FIRST_CHILD,
                        SnapshotFormat.P_NEXT_SIBLING,
                        SnapshotFormat.P_ATTACH_BOUND,
                        p + SnapshotFormat.R_LENGTH,
                        p + SnapshotFormat.R_ENTRIES,
                        p + SnapshotFormat.R_CHUNKS,
                        p + SnapshotFormat.R_ENTRY0,
                        p + SnapshotFormat.R_ENTRY0 + 8,
                        p + SnapshotFormat.R_START,
                        p + SnapshotFormat.R_PARENT,
                        p + SnapshotFormat.R_LOCK,
                        p + SnapshotFormat.R_CAPACITY,
                        p + SnapshotFormat.R_CHILDREN,
                        p + SnapshotFormat.R_HOLDERS,
                        p + SnapshotFormat.RUN_HEADER_BYTES),
                List.copyOf(r.values()));
    }
}
