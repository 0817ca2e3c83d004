package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.kvprefix.testing.SnapshotStates;
import io.kvprefix.testing.TestScale;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BiFunction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad snapshots are refused, whole (docs/SNAPSHOT.md section 5): missing, a directory, not a regular
 * file, unreadable, empty, truncated anywhere, bytes appended, the wrong magic or version, another
 * configuration, too big for the budget, any flipped byte (a fuzz over a real snapshot), and files
 * whose CRCs were recomputed after damage to their structure. Every refusal is a
 * {@link SnapshotException} naming the file and the reason, for both restores; a new index works
 * afterwards.
 */
class SnapshotRefusalTest {
    @TempDir
    Path dir;

    private static final IndexConfig CONFIG =
            IndexConfig.builder().maxWorkers(64).build();
    private static final List<BiFunction<Path, IndexConfig, PrefixIndex>> RESTORES =
            List.of(PrefixIndex::restore, PrefixIndex::restoreHeap);

    private Path good;
    private byte[] bytes;
    private String fingerprint;
    private SnapshotStates states;

    @BeforeEach
    void saveARealSnapshot() throws IOException {
        states = new SnapshotStates(5, 10, 40, 120);
        good = dir.resolve("good.snap");
        try (PrefixIndex index = PrefixIndex.create(CONFIG)) {
            SnapshotStates.apply(states.events(4000), index);
            index.snapshot(good, java.util.Map.of("engine", "42"));
            fingerprint = states.fingerprint(index);
        }
        bytes = Files.readAllBytes(good);
    }

    /** Both restores refuse {@code file} with a message naming it and containing {@code reason}. */
    private void refused(Path file, IndexConfig config, String reason) {
        for (BiFunction<Path, IndexConfig, PrefixIndex> restore : RESTORES) {
            SnapshotException e = assertThrows(
                    SnapshotException.class, () -> restore.apply(file, config).close());
            assertEquals(file, e.file());
            assertTrue(e.getMessage().startsWith("snapshot " + file + ": "), e.getMessage());
            assertTrue(e.reason().contains(reason), e.getMessage() + " (expected '" + reason + "')");
            assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        }
        try (PrefixIndex fresh = PrefixIndex.create(config)) { // the caller may go on with an empty index
            assertEquals(List.of(), fresh.workers());
        }
    }

    private Path write(String name, byte[] content) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, content);
        return p;
    }

    @Test
    void theRealSnapshotRestores() {
        // the snapshot the damage is done to has lower tiers: some worker matches deeper on any tier
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("depth=(\\d+), anyTierDepth=(\\d+)")
                .matcher(fingerprint);
        boolean lower = false;
        while (m.find()) {
            lower |= Integer.parseInt(m.group(2)) > Integer.parseInt(m.group(1));
        }
        assertTrue(lower, "no lower-tier holding in the state");
        for (BiFunction<Path, IndexConfig, PrefixIndex> restore : RESTORES) {
            try (PrefixIndex r = restore.apply(good, CONFIG)) {
                assertEquals(fingerprint, states.fingerprint(r));
            }
        }
    }

    @Test
    void filesThatAreNoSnapshots() throws IOException {
        refused(dir.resolve("missing.snap"), CONFIG, "cannot read: no such file or directory");
        refused(dir, CONFIG, "is a directory");
        refused(Path.of("/dev/null"), CONFIG, "not a regular file");
        refused(write("empty.snap", new byte[0]), CONFIG, "truncated (0 bytes");
        refused(write("text.snap", "{\"op\":\"match\"}\n".getBytes()), CONFIG, "not a kvprefix snapshot (bad magic)");
        byte[] b = bytes.clone();
        b[0] = 'K';
        refused(write("magic.snap", b), CONFIG, "not a kvprefix snapshot (bad magic)");
        refused(write("crlf.snap", textModeCopy(bytes)), CONFIG, "bad magic");
    }

    /** What a text-mode transfer does to a file: every \n becomes \r\n. */
    private static byte[] textModeCopy(byte[] b) {
        ByteBuffer out = ByteBuffer.allocate(b.length * 2);
        for (byte x : b) {
            if (x == '\n') {
                out.put((byte) '\r');
            }
            out.put(x);
        }
        return Arrays.copyOf(out.array(), out.position());
    }

    @Test
    void anUnreadableFile() throws IOException {
        Path p = write("unreadable.snap", bytes);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("---------"));
        assumeFalse(
                Files.isReadable(p), "running as root: permissions do not stop reads (the CLI test drops privileges)");
        refused(p, CONFIG, "cannot read: permission denied");
    }

    @Test
    void truncatedAnywhere() throws IOException {
        int[] cuts = {
            1, 7, 8, 63, 64, 287, 288, 300, bytes.length / 3, bytes.length / 2, bytes.length - 8, bytes.length - 1
        };
        for (int n : cuts) {
            refused(write("cut" + n + ".snap", Arrays.copyOf(bytes, n)), CONFIG, "truncated");
        }
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 8);
        refused(write("longer.snap", longer), CONFIG, "bytes appended");
    }

    @Test
    void anotherVersion() throws IOException {
        byte[] b = bytes.clone();
        le(b).putInt(8, 3);
        refused(write("v3.snap", b), CONFIG, "format version 3; this kvprefix reads version 2");
        le(b).putInt(8, 1); // version 1 stored each name map as one table: its files are refused, not misread
        refused(write("v1.snap", b), CONFIG, "format version 1; this kvprefix reads version 2");
    }

    @Test
    void anotherConfiguration() {
        refused(
                good,
                CONFIG.toBuilder().blockSize(32).build(),
                "written with block size 16, but the index is configured with 32");
        refused(good, CONFIG.toBuilder().seed(1).build(), "written with seed 1337, but the index is configured with 1");
        refused(
                good,
                CONFIG.toBuilder().chainSeed(0).build(),
                "written with chain seed 1337, but the index is configured with 0");
        refused(
                good,
                CONFIG.toBuilder().maxWorkers(65).build(),
                "written with max workers 64, but the index is configured with 65");
    }

    @Test
    void tooBigForTheBudget() {
        refused(good, CONFIG.toBuilder().memoryBudgetBytes(64 * 1024).build(), "does not fit");
    }

    @Test
    void aFlippedBitInEveryPartIsFound() throws IOException {
        ByteBuffer h = le(bytes);
        String[] names = {"metadata", "counters", "workers", "runs", "names", "side sets", "salts"};
        for (int t = 0; t < 7; t++) {
            long off = h.getLong(64 + 32 * t + 8);
            long len = h.getLong(64 + 32 * t + 16);
            if (len == 0) {
                continue;
            }
            byte[] b = bytes.clone();
            b[(int) (off + len / 2)] ^= 0x10;
            refused(write("flip" + t + ".snap", b), CONFIG, "damaged " + names[t] + " section (CRC32C mismatch)");
        }
        for (int at : new int[] {20, 30, 50, 60, 70, 100, 200}) {
            byte[] b = bytes.clone();
            b[at] ^= 0x01;
            refused(write("flip-header" + at + ".snap", b), CONFIG, "damaged header");
        }
    }

    @Test
    void randomDamageIsAlwaysRefused() throws IOException {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        int runs = TestScale.iterations(400, 5000);
        Path p = dir.resolve("fuzz.snap");
        for (int i = 0; i < runs; i++) {
            byte[] b = bytes.clone();
            String what;
            if (r.nextInt(5) == 0) {
                int n = r.nextInt(b.length);
                b = Arrays.copyOf(b, n);
                what = "truncated to " + n;
            } else {
                int flips = 1 + r.nextInt(r.nextBoolean() ? 1 : 8);
                StringBuilder sb = new StringBuilder();
                for (int k = 0; k < flips; k++) {
                    int at = r.nextInt(b.length);
                    byte was = b[at];
                    b[at] = (byte) (was ^ (1 + r.nextInt(255)));
                    sb.append(at).append(' ');
                }
                what = "bytes changed at " + sb;
            }
            Files.write(p, b);
            BiFunction<Path, IndexConfig, PrefixIndex> restore = RESTORES.get(i & 1);
            long t0 = System.nanoTime();
            try (PrefixIndex accepted = restore.apply(p, CONFIG)) {
                fail("damaged snapshot accepted (" + accepted.workers().size() + " workers): " + what + ", "
                        + TestScale.replay(seed));
            } catch (SnapshotException e) {
                assertTrue(e.getMessage().startsWith("snapshot " + p + ": "), e.getMessage());
            }
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "a refusal took over 5 s: " + what);
        }
    }

    // ------------------------------------------------------------------ forged files

    /** Little-endian view of {@code b}. */
    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Recomputes every section's CRC and the header's: damage that the CRCs cannot see any more. */
    static void forgeCrcs(byte[] b) {
        io.kvprefix.testing.ForgedSnapshotMain.forgeCrcs(b);
    }

    private long section(int type) {
        return le(bytes).getLong(64 + 32 * (type - 1) + 8);
    }

    /** The first run record's header offset. */
    private int firstRun() {
        return (int) section(4) + 16;
    }

    private void forged(String name, String reason, java.util.function.Consumer<ByteBuffer> damage) throws IOException {
        byte[] b = bytes.clone();
        damage.accept(le(b));
        forgeCrcs(b);
        refused(write(name + ".snap", b), CONFIG, reason);
    }

    @Test
    void structuralDamageBehindValidCrcsIsRefused() throws IOException {
        int run = firstRun();
        long workers = section(3);
        long names = section(5);
        forged("capacity", "damaged runs section", b -> b.putInt(run + 44, 5));
        forged("length0", "damaged runs section", b -> b.putInt(run, 0));
        forged("length-over-capacity", "damaged runs section", b -> b.putInt(run, b.getInt(run + 44) + 1));
        forged("run-id", "damaged runs section", b -> b.putInt(run - 16, Integer.MAX_VALUE));
        forged("lock", "damaged runs section", b -> b.putInt(run + 40, 1));
        forged("chunks", "damaged runs section", b -> b.putLong(run + 8, 0x7000_0000_0000L));
        forged("entries", "damaged runs section", b -> b.putInt(run + 4, 1 << 20));
        forged("holder", "damaged runs section", b -> b.putLong(run + 16, 0xFFFF_FFFFL));
        forged("holders-count", "damaged runs section", b -> b.putInt(run + 52, b.getInt(run + 52) + 1));
        forged("parent", "damaged runs section", b -> b.putInt(run + 36, 0x7FFF_FFF0));
        forged("start", "damaged runs section", b -> b.putInt(run + 32, b.getInt(run + 32) + 1));
        forged("first-child", "damaged runs section", b -> b.putInt(run - 12, 0x00FF_FFFF));
        forged("next-sibling", "damaged runs section", b -> b.putInt(run - 8, 0x00FF_FFFF));
        forged("attach-bound", "damaged runs section", b -> b.putInt(run - 4, 65));
        forged("children", "damaged runs section", b -> b.putInt(run + 48, b.getInt(run + 48) + 1));
        forged("slot", "damaged workers section", b -> b.putInt((int) workers + 12, 64));
        forged("name-segments", "damaged workers section", b -> b.putInt((int) workers + 24, 0));
        forged("name-depth", "damaged workers section", b -> b.putInt((int) workers + 44, 25));
        forged("name-bytes", "damaged", b -> b.putLong((int) workers + 48, b.getLong((int) workers + 48) + 8));
        forged("segment-capacity", "damaged names section", b -> b.putInt((int) names, 15));
        forged("segment-names", "damaged names section", b -> b.putInt((int) names + 4, b.getInt((int) names + 4) + 1));
        forged("segment-depth", "damaged names section", b -> b.putInt((int) names + 8, 25));
        forged("segment-prefix", "damaged names section", b -> b.putInt((int) names + 12, 1 << 24));
        forged(
                "distinct",
                "damaged runs section",
                b -> b.putLong((int) workers + 16, b.getLong((int) workers + 16) - 1));
        forged("name-value", "damaged names section", b -> {
            int cap = b.getInt((int) names); // the first segment's header, then its table
            long values = names + 16 + 8L * cap;
            for (int i = 0; i < cap; i++) {
                if (b.getInt((int) (values + 4L * i)) != 0) {
                    b.putInt((int) (values + 4L * i), 0x7FFF_FFF0);
                    return;
                }
            }
        });
        forged("counter", "damaged counters section", b -> b.putLong((int) section(2), -1));
        forged("metadata", "damaged metadata section", b -> b.putInt((int) section(1), 1 << 30));
        forged("salts", "damaged salts section", b -> b.putInt(64 + 32 * 6 + 4, 1000)); // 1,000 salts
    }

    /**
     * A name map of several segments, forged behind valid CRCs: segments out of directory order, and
     * names moved from one segment's count to another's (each header's count is what a restored
     * segment grows by; a segment believed emptier than it is could fill up and never end a probe).
     */
    @Test
    void forgedSegmentsAreRefused() throws IOException {
        Path file = dir.resolve("segments.snap");
        try (PrefixIndex index = PrefixIndex.create(CONFIG)) {
            Worker w = Worker.of(1);
            SplittableRandom r = new SplittableRandom(5);
            for (long name = 1; name < 30_000; name += 16) {
                long[] hashes =
                        java.util.stream.LongStream.range(name, name + 16).toArray();
                index.apply(new KvEvent.Stored(
                        w, java.util.OptionalLong.empty(), hashes, r.longs(16).toArray(), Medium.GPU));
            }
            index.snapshot(file);
        }
        byte[] b0 = Files.readAllBytes(file);
        ByteBuffer h = le(b0);
        long workers = h.getLong(64 + 32 * 2 + 8);
        assertTrue(h.getInt((int) workers + 24) >= 2, "several segments");
        int first = (int) h.getLong(64 + 32 * 4 + 8);
        int cap = h.getInt(first);
        long t = 12L * cap;
        int second = (int) (first + 16 + t + (-t & 7));
        for (String what : new String[] {"order", "counts"}) {
            byte[] b = b0.clone();
            ByteBuffer x = le(b);
            if (what.equals("order")) { // the first two segments' places in the directory swapped
                int p0 = x.getInt(first + 12);
                int d0 = x.getInt(first + 8);
                x.putInt(first + 12, x.getInt(second + 12)).putInt(first + 8, x.getInt(second + 8));
                x.putInt(second + 12, p0).putInt(second + 8, d0);
            } else {
                x.putInt(first + 4, x.getInt(first + 4) - 1);
                x.putInt(second + 4, x.getInt(second + 4) + 1);
            }
            forgeCrcs(b);
            refused(write("segments-" + what + ".snap", b), CONFIG, "damaged names section");
        }
    }

    @Test
    void randomDamageBehindValidCrcsNeverCrashesARestore() throws IOException {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        int runs = TestScale.iterations(300, 3000);
        Path p = dir.resolve("forged.snap");
        long from = section(1);
        int accepted = 0;
        for (int i = 0; i < runs; i++) {
            byte[] b = bytes.clone();
            int flips = 1 + r.nextInt(4);
            for (int k = 0; k < flips; k++) {
                int at = (int) (from + r.nextLong(b.length - from));
                b[at] = (byte) (b[at] ^ (1 + r.nextInt(255)));
            }
            forgeCrcs(b);
            Files.write(p, b);
            try (PrefixIndex x = RESTORES.get(i & 1).apply(p, CONFIG)) {
                accepted++; // a forged file can hold another valid state (a changed hash, say): not detectable
                x.workers();
            } catch (SnapshotException e) {
                assertTrue(e.getMessage().startsWith("snapshot " + p + ": "), e.getMessage());
            }
        }
        System.out.println(
                "SnapshotRefusalTest forged: " + accepted + " of " + runs + " accepted, " + TestScale.replay(seed));
    }
}
