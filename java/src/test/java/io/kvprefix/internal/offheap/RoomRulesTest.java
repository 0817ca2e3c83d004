package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rules of this package's rooms, read from its sources (the table of rights in its
 * {@code package-info.java}): no room names the facade, each class opens with the locks it takes,
 * only {@link RunLock} touches the lock word of a live run, and the child table is inserted into in
 * exactly two places of the store room (a branch under its parent's lock, and a chain's start).
 * Each rule was seen to fail once against a source that broke it.
 */
class RoomRulesTest {
    private static final Pattern COMMENTS = Pattern.compile("(?s)/\\*.*?\\*/|//[^\\n]*");
    private static final Pattern TYPE = Pattern.compile("(?m)^(?:public )?(?:final )?(?:class|interface|record|enum) ");
    private static final Pattern LOCK_BITS = Pattern.compile("\\bLOCK_(?:HELD|DEAD|MOVED)\\b");

    @Test
    void noRoomNamesTheFacade() throws IOException {
        List<String> bad = new ArrayList<>();
        sources().forEach((name, text) -> {
            if (!name.equals("OffHeapPrefixIndex.java") && code(text).matches("(?s).*\\bOffHeapPrefixIndex\\b.*")) {
                bad.add(name);
            }
        });
        assertTrue(bad.isEmpty(), "rooms that name the facade (take it, or call back into it): " + bad);
    }

    @Test
    void everyClassOpensWithTheLocksItTakes() throws IOException {
        List<String> bad = new ArrayList<>();
        sources().forEach((name, text) -> {
            if (!classComment(text).contains("<p>Locks:")) {
                bad.add(name);
            }
        });
        assertTrue(bad.isEmpty(), "classes whose javadoc does not say which locks they take (\"<p>Locks:\"): " + bad);
    }

    @Test
    void onlyTheRunLockTouchesTheLockWord() throws IOException {
        List<String> bad = new ArrayList<>();
        sources().forEach((name, text) -> {
            String code = code(text);
            boolean bits = LOCK_BITS.matcher(code).find();
            boolean word = code.contains("RUN_LOCK");
            // ChainLayout defines them; ChainSnapshot zeroes the word in the copy it writes to a file.
            boolean allowed = name.equals("RunLock.java")
                    || name.equals("ChainLayout.java")
                    || (name.equals("ChainSnapshot.java") && !bits);
            if ((bits || word) && !allowed) {
                bad.add(name);
            }
        });
        assertTrue(bad.isEmpty(), "classes that read or write a run's lock word outside RunLock: " + bad);
    }

    @Test
    void theChildTableIsClaimedInOnePlaceOfTheStoreRoom() throws IOException {
        Map<String, Integer> inserts = new TreeMap<>();
        sources().forEach((name, text) -> {
            int n = count(code(text), "insertIfAbsent(") + count(code(text), "ct.claim(");
            if (n > 0 && !name.equals("ChildTable.java")) {
                inserts.put(name, n);
            }
        });
        assertEquals(Map.of("Stores.java", 1), inserts, "child-table insertions outside Stores.branch");
    }

    @Test
    void theRulesSeeWhatTheyLookFor() {
        String src = "/** A room.\n *\n * <p>Locks: none.\n */\nfinal class X {\n"
                + "    // OffHeapPrefixIndex in a comment does not count\n"
                + "    void f(OffHeapPrefixIndex index) { int v = ChainLayout.LOCK_HELD; }\n}\n";
        assertTrue(classComment(src).contains("<p>Locks:"));
        assertTrue(code(src).contains("OffHeapPrefixIndex index"));
        assertEquals(1, count(code(src), "OffHeapPrefixIndex"));
        assertTrue(LOCK_BITS.matcher(code(src)).find());
        assertTrue(!classComment("final class Y {}\n").contains("<p>Locks:"));
    }

    /** The package's main sources but its package-info, by file name. */
    private static Map<String, String> sources() throws IOException {
        Path dir = RepoPaths.root().resolve("java/src/main/java/io/kvprefix/internal/offheap");
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.filter(f -> f.toString().endsWith(".java")).toList()) {
                if (!p.getFileName().toString().equals("package-info.java")) {
                    out.put(p.getFileName().toString(), Files.readString(p));
                }
            }
        }
        assertTrue(out.size() > 20, "too few sources found in " + dir);
        return out;
    }

    private static String code(String text) {
        return COMMENTS.matcher(text).replaceAll(" ");
    }

    /** The javadoc just before the first top-level type, or "" if there is none. */
    private static String classComment(String text) {
        Matcher m = TYPE.matcher(text);
        if (!m.find()) {
            return "";
        }
        String before = text.substring(0, m.start()).stripTrailing();
        int end = before.lastIndexOf("*/");
        int start = before.lastIndexOf("/**");
        return end >= 0
                        && start >= 0
                        && start < end
                        && before.substring(end + 2).isBlank()
                ? before.substring(start, end)
                : "";
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }
}
