package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documents a newcomer reads name nothing the repository lacks, and their Java snippets are the
 * example's code, so neither can rot: README.md, CONTRIBUTING.md, docs/*.md, benchmarks/RESULTS.md and
 * benchmarks/JOURNAL.md.
 *
 * <ul>
 *   <li>Every relative Markdown link resolves (from the document's folder).
 *   <li>Every path that starts at a top-level entry of the repository ({@code examples/...},
 *       {@code .ci/run}, {@code cli/...}) exists; {@code *} globs must match something; a
 *       {@code <placeholder>} ends the path; {@code target/} paths are build output and not checked.
 *   <li>Every file name in backticks with a document or build extension ({@code CONTRIBUTING.md},
 *       {@code CMakeLists.txt}, {@code LICENSE}) exists somewhere in the repository.
 *   <li>Every {@code java} block of a document follows a line {@code <!-- from PATH -->} and is
 *       contained in that file (white space aside; a line {@code ...} skips ahead in the file); the
 *       README has at least one.
 * </ul>
 */
class DocumentsTest {
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern TICKED_NAME =
            Pattern.compile("`([A-Za-z][\\w.-]*\\.(?:md|txt|xml|properties)|LICENSE|NOTICE)`");
    private static final Pattern SNIPPET =
            Pattern.compile("(?m)^<!-- from (\\S+) -->\\n```java\\n(.*?)^```", Pattern.DOTALL);

    static List<Path> documents(Path root) throws IOException {
        List<Path> docs = new ArrayList<>();
        for (String name : List.of("README.md", "CONTRIBUTING.md", "benchmarks/RESULTS.md", "benchmarks/JOURNAL.md")) {
            docs.add(root.resolve(name));
        }
        try (Stream<Path> s = Files.list(root.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    @Test
    void theDocumentsNameNothingTheRepositoryLacks() throws IOException {
        Path root = RepoPaths.root();
        List<String> broken = new ArrayList<>();
        for (Path doc : documents(root)) {
            assertTrue(Files.isRegularFile(doc), doc + " is missing");
            broken.addAll(brokenNames(root, doc, Files.readString(doc)));
        }
        assertTrue(broken.isEmpty(), String.join("\n", broken));
    }

    @Test
    void theCheckFindsWhatIsMissing() throws IOException {
        Path root = RepoPaths.root();
        String text = "See [the guide](CONTRIBUTING.md), [gone](docs/NOPE.md), [web](https://example.com),"
                + " `examples/embed-router/pom.xml`, `examples/nothing/pom.xml`, `.ci/run`, `cli/target/x.jar`,"
                + " `native/<os>-<arch>/`, `opstream/src/test/resources/replay/ex*_*.jsonl`, `LICENSE`, `MISSING.md`"
                + " and lib/bench/kv_router (Dynamo's, not ours).";
        List<String> found = brokenNames(root, root.resolve("README.md"), text);
        assertEquals(
                List.of(
                        "README.md: links to docs/NOPE.md, which does not exist",
                        "README.md: names examples/nothing/pom.xml, which does not exist",
                        "README.md: names MISSING.md, which the repository does not have"),
                found);
    }

    /** What {@code text} (of {@code doc}) names that does not exist, one line each. */
    static List<String> brokenNames(Path root, Path doc, String text) throws IOException {
        List<String> broken = new ArrayList<>();
        String where = root.relativize(doc).toString();
        Matcher link = LINK.matcher(text);
        while (link.find()) {
            String target = link.group(1).replaceAll("#.*$", "");
            if (target.isEmpty() || target.matches("^[a-z]+:.*")) {
                continue; // an anchor in the same document, or a URL
            }
            if (!Files.exists(doc.getParent().resolve(target))) {
                broken.add(where + ": links to " + target + ", which does not exist");
            }
        }
        Matcher path = repoPath(root).matcher(LINK.matcher(text).replaceAll("")); // links are checked above
        while (path.find()) {
            String named = path.group(1).replaceAll("[.,:;)]+$", "");
            if (!named.contains("/target/") && !named.endsWith("/target") && !exists(root, named)) {
                broken.add(where + ": names " + named + ", which does not exist");
            }
        }
        Set<String> files = fileNames(root);
        Matcher ticked = TICKED_NAME.matcher(text);
        while (ticked.find()) {
            if (!files.contains(ticked.group(1))) {
                broken.add(where + ": names " + ticked.group(1) + ", which the repository does not have");
            }
        }
        return broken;
    }

    /** A path from a top-level entry of the repository: that entry, a slash, then names. */
    private static Pattern repoPath(Path root) throws IOException {
        List<String> tops = new ArrayList<>();
        try (Stream<Path> s = Files.list(root)) {
            s.map(p -> p.getFileName().toString())
                    .filter(n -> !n.equals("target") && !n.equals(".git"))
                    .sorted()
                    .forEach(n -> tops.add(Pattern.quote(n)));
        }
        return Pattern.compile("(?<![\\w./-])((?:" + String.join("|", tops) + ")/[\\w./*-]*)");
    }

    /** True if {@code named} exists, or, with a {@code *} in its last name, some file matches it. */
    private static boolean exists(Path root, String named) throws IOException {
        Path p = root.resolve(named);
        if (!p.getFileName().toString().contains("*")) {
            return Files.exists(p);
        }
        if (!Files.isDirectory(p.getParent())) {
            return false;
        }
        PathMatcher glob = p.getFileSystem().getPathMatcher("glob:" + p.getFileName());
        try (Stream<Path> s = Files.list(p.getParent())) {
            return s.anyMatch(f -> glob.matches(f.getFileName()));
        }
    }

    private static Set<String> fileNames(Path root) throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .filter(Files::isRegularFile)
                    .forEach(p -> names.add(p.getFileName().toString()));
        }
        return names;
    }

    @Test
    void theDocumentsJavaSnippetsAreTheExamplesCode() throws IOException {
        Path root = RepoPaths.root();
        String readme = Files.readString(root.resolve("README.md"));
        assertTrue(Pattern.compile("(?m)^```java$").matcher(readme).find(), "the README shows how to embed kvprefix");
        for (Path doc : documents(root)) {
            String text = Files.readString(doc);
            long blocks =
                    Pattern.compile("(?m)^```java$").matcher(text).results().count();
            Matcher m = SNIPPET.matcher(text);
            int checked = 0;
            while (m.find()) {
                String source = Files.readString(root.resolve(m.group(1)));
                assertTrue(
                        containsInOrder(source, m.group(2)),
                        root.relativize(doc) + ": snippet not found in " + m.group(1) + " (white space aside):\n"
                                + m.group(2));
                checked++;
            }
            assertEquals(
                    blocks, checked, root.relativize(doc) + ": every java block follows a line <!-- from PATH -->");
        }
    }

    @Test
    void theSnippetCheckFailsOnCodeTheExampleDoesNotHave() {
        String source = "int a = 1;  // one\n    int b = a + 1;\nint c = b * 2;\n";
        assertTrue(containsInOrder(source, "int a = 1; // one\nint b = a + 1;"));
        assertTrue(containsInOrder(source, "int a = 1; // one\n...\nint c = b * 2;"));
        assertTrue(!containsInOrder(source, "int a = 2;"));
        assertTrue(!containsInOrder(source, "int c = b * 2;\n...\nint a = 1;"), "pieces in order");
    }

    /** True if the pieces of {@code snippet} between lines {@code ...} occur in {@code source} in order. */
    static boolean containsInOrder(String source, String snippet) {
        String text = normalize(source);
        int at = 0;
        for (String piece : snippet.split("(?m)^\\s*\\.\\.\\.\\s*$")) {
            String p = normalize(piece);
            if (p.isEmpty()) {
                continue;
            }
            int i = text.indexOf(p, at);
            if (i < 0) {
                return false;
            }
            at = i + p.length();
        }
        return true;
    }

    private static String normalize(String s) {
        return s.replaceAll("\\s+", " ").strip();
    }

    @Test
    void theExampleDependsOnThisVersion() throws IOException {
        Path root = RepoPaths.root();
        Matcher v = Pattern.compile("<artifactId>kvprefix-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(root.resolve("pom.xml")));
        assertTrue(v.find());
        String version = v.group(1);
        try (Stream<Path> s = Files.list(root.resolve("examples"))) {
            for (Path example : s.filter(Files::isDirectory).toList()) {
                String pom = Files.readString(example.resolve("pom.xml"));
                assertTrue(
                        pom.contains("<kvprefix.version>" + version + "</kvprefix.version>"),
                        example + " depends on kvprefix " + version);
                assertTrue(!pom.contains("<parent>"), example + " stands alone, outside the build");
            }
        }
        String readme = Files.readString(root.resolve("README.md"));
        assertTrue(readme.contains("<version>" + version + "</version>"), "the README's coordinates say " + version);
    }
}
