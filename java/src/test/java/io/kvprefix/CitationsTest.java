package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A reader who follows a citation finds what it names, in every module of the build:
 *
 * <ul>
 *   <li>every document that main code (Java, C, the header) cites exists, and so does every test
 *       class it names;
 *   <li>every "{@code PATH.md section N}" in code, tests, scripts and documents names a section that
 *       document has (a heading that starts with N), also when the citation is broken over two
 *       comment lines or two string literals;
 *   <li>every repository path that the documents, the build files, the launcher and main code name
 *       exists;
 *   <li>every Java name in the documents (a backticked {@code Type}, {@code Type.member} or
 *       {@code Type#member}) and in main javadoc (a {@code {@code ...}} of that shape) names a type,
 *       nested type and member the code has ({@link JavaNames} states the rule and holds the short
 *       list of other projects' names). The journal of measured rounds, {@code
 *       benchmarks/JOURNAL.md}, is history and may name what the code no longer has.
 * </ul>
 */
class CitationsTest {
    private static final Pattern DOC = Pattern.compile("\\b((?:[\\w-]+/)*[\\w-]+\\.md)\\b");
    private static final Pattern SECTION = Pattern.compile(
            "\\b((?:[\\w-]+/)*[\\w-]+\\.md)\\s+sections?\\s+(\\d+(?:\\.\\d+)?(?:(?:,\\s*|\\s+and\\s+)\\d+(?:\\.\\d+)?)*)");
    private static final Pattern NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");
    private static final Pattern TEST_CLASS = Pattern.compile("\\b([A-Z]\\w*Test)\\b");

    @Test
    void everyDocumentAndTestClassMainCodeCitesExists() throws IOException {
        Path root = RepoPaths.root();
        Set<String> testClasses = testClassNames(root);
        List<String> broken = new ArrayList<>();
        for (Path f : mainSources(root)) {
            String text = Files.readString(f);
            String where = root.relativize(f).toString();
            Matcher d = DOC.matcher(text);
            while (d.find()) {
                if (!Files.isRegularFile(root.resolve(d.group(1)))) {
                    broken.add(where + ": cites " + d.group(1) + ", which the repository does not have");
                }
            }
            Matcher t = TEST_CLASS.matcher(text);
            Set<String> imported = foreignImports(text);
            while (t.find()) {
                if (!testClasses.contains(t.group(1)) && !imported.contains(t.group(1))) {
                    broken.add(where + ": names test class " + t.group(1) + ", which does not exist");
                }
            }
        }
        assertTrue(broken.isEmpty(), String.join("\n", broken));
    }

    /**
     * The simple names a file imports from outside the project: a library's type whose name ends in
     * "Test" (Jinjava's {@code ExpTest}, an expression test) is no citation of a test class.
     */
    private static Set<String> foreignImports(String text) {
        Set<String> out = new HashSet<>();
        Matcher m = Pattern.compile("(?m)^import\\s+(?!io\\.kvprefix\\.)[\\w.]*\\.([A-Z]\\w*)\\s*;")
                .matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void theCheckIgnoresALibrarysTypeNamedLikeATest() {
        assertTrue(foreignImports("import com.hubspot.jinjava.lib.exptest.ExpTest;\nimport io.kvprefix.X.FooTest;\n")
                .equals(Set.of("ExpTest")));
    }

    @Test
    void everySectionCitedAnywhereExists() throws IOException {
        Path root = RepoPaths.root();
        List<String> broken = new ArrayList<>();
        for (Path f : citingFiles(root)) {
            if (f.endsWith("java/src/test/java/io/kvprefix/CitationsTest.java")) {
                continue; // its own examples of broken citations
            }
            broken.addAll(brokenSections(root, f, joined(f, Files.readString(f))));
        }
        assertTrue(broken.isEmpty(), String.join("\n", broken));
    }

    /** The section citations of {@code text} (of file {@code f}) that name no heading of their document. */
    static List<String> brokenSections(Path root, Path f, String text) throws IOException {
        List<String> broken = new ArrayList<>();
        String where = root.relativize(f).toString();
        Matcher s = SECTION.matcher(text);
        while (s.find()) {
            if (s.start() > 0 && "/.".indexOf(text.charAt(s.start() - 1)) >= 0) {
                continue; // a path outside the repository, such as ../shared/...
            }
            Path doc = root.resolve(s.group(1));
            if (!Files.isRegularFile(doc)) {
                doc = f.getParent().resolve(s.group(1));
            }
            if (!Files.isRegularFile(doc)) {
                broken.add(where + ": cites " + s.group(1) + ", which the repository does not have");
                continue;
            }
            String headings = headings(doc);
            Matcher n = NUMBER.matcher(s.group(2));
            while (n.find()) {
                if (!Pattern.compile("(?m)^#+\\s+" + Pattern.quote(n.group()) + "[.\\s]")
                        .matcher(headings)
                        .find()) {
                    broken.add(where + ": cites " + s.group(1) + " section " + n.group() + ", which it does not have");
                }
            }
        }
        return broken;
    }

    /** {@code text} with comment continuations and split string literals joined, so a citation reads whole. */
    static String joined(Path f, String text) {
        String name = f.getFileName().toString();
        String t = text;
        if (name.endsWith(".java") || name.endsWith(".c") || name.endsWith(".h")) {
            t = t.replaceAll("\"\\s*[,+]?\\s*\\n\\s*\\+?\\s*\"", " ") // "...", "..." and "..." + "..."
                    .replaceAll("\\n\\s*(?:\\*(?!/)|//)\\s?", " ");
        } else if (name.endsWith(".sh") || name.endsWith(".py") || name.equals("kvprefix") || name.equals("run")) {
            t = t.replaceAll("\\n\\s*#\\s?", " ");
        }
        return t;
    }

    /** Every file that may cite a document: sources, tests, scripts, build files and documents. */
    private static List<Path> citingFiles(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(Files::isRegularFile)
                    .filter(p -> !p.toString().contains("/target/")
                            && !p.toString().contains("/.git/")
                            && !p.toString().contains("/benchmarks/results/"))
                    .filter(p -> {
                        String n = p.getFileName().toString();
                        return n.matches(".*\\.(java|c|h|md|sh|py|json|xml)")
                                || n.equals("kvprefix")
                                || n.equals("run");
                    })
                    .forEach(out::add);
        }
        return out;
    }

    @Test
    void theSectionCheckReadsCitationsBrokenOverLines() throws IOException {
        Path root = RepoPaths.root();
        Path f = root.resolve("java/src/main/java/io/kvprefix/Example.java");
        String text = " * as docs/SPEC.md\n * section 99 says, and \"docs/SPEC.md\",\n     \"section 4.1 and 98\" too;"
                + " ../shared/x/SPEC.md section 97 is not ours";
        assertEquals(
                List.of(
                        "java/src/main/java/io/kvprefix/Example.java: cites docs/SPEC.md section 99, which it does not have",
                        "java/src/main/java/io/kvprefix/Example.java: cites docs/SPEC.md section 98, which it does not have"),
                brokenSections(root, f, joined(f, text)));
    }

    @Test
    void everyJavaNameInTheDocumentsAndJavadocResolves() throws IOException {
        Path root = RepoPaths.root();
        JavaNames names = new JavaNames(root);
        List<String> broken = new ArrayList<>();
        for (Path doc : DocumentsTest.documents(root)) {
            if (doc.endsWith("benchmarks/JOURNAL.md")) {
                continue; // history: it names what earlier rounds had
            }
            broken.addAll(brokenNames(names, root.relativize(doc).toString(), codeSpans(Files.readString(doc))));
        }
        for (Path f : mainSources(root)) {
            if (f.toString().endsWith(".java")) {
                broken.addAll(brokenNames(names, root.relativize(f).toString(), javadocCode(Files.readString(f))));
            }
        }
        assertTrue(broken.isEmpty(), broken.size() + " names the code does not have:\n" + String.join("\n", broken));
    }

    @Test
    void theNameCheckFindsAMadeUpName() throws IOException {
        JavaNames names = new JavaNames(RepoPaths.root());
        String doc = "`PrefixIndex.match`, `Router.Builder.policy(name)`, `KvEvent.StoredTokens`, `MatchResult#depth`,"
                + " `EventStatus.INVALID_INPUT`, `PositionalIndexer`, `Long.toUnsignedString`, `LongAdder`, `GPU`,"
                + " `kvprefix-ttft`, `Map<K, V>`, `PrefixIndex.offHeapTable`, `NoSuchIndex`, `Router.Builder.jumps`,"
                + " `KvEvent.Moved`, `Long.toUnsignedStrings`\n```\n`Inside.fence`\n```\n";
        assertEquals(
                List.of(
                        "X.md: `PrefixIndex.offHeapTable`: PrefixIndex declares no offHeapTable",
                        "X.md: `NoSuchIndex`: no type NoSuchIndex in the sources or the JDK",
                        "X.md: `Router.Builder.jumps`: Router.Builder declares no jumps",
                        "X.md: `KvEvent.Moved`: no nested type Moved in KvEvent",
                        "X.md: `Long.toUnsignedStrings`: java.lang.Long has no member toUnsignedStrings"),
                brokenNames(names, "X.md", codeSpans(doc)));
        assertEquals(
                List.of("Y.java: `NoSuchKernel.run()`: no type NoSuchKernel in the sources or the JDK"),
                brokenNames(
                        names,
                        "Y.java",
                        javadocCode("/** Uses {@code PrefixIndex} and {@code NoSuchKernel.run()}. */")));
    }

    private static List<String> brokenNames(JavaNames names, String where, List<String> spans) {
        List<String> broken = new ArrayList<>();
        for (String span : spans) {
            names.problem(span).ifPresent(why -> broken.add(where + ": `" + span + "`: " + why));
        }
        return broken;
    }

    /** The backticked spans of a Markdown text, outside fenced blocks. */
    static List<String> codeSpans(String markdown) {
        String text = markdown.replaceAll("(?ms)^```.*?^```[^\\n]*$", "");
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("`([^`\\n]+)`").matcher(text);
        while (m.find()) {
            out.add(m.group(1).strip());
        }
        return out;
    }

    /** The contents of the {@code {@code ...}} tags of a Java source. */
    static List<String> javadocCode(String source) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\{@code\\s+([^{}]+)\\}").matcher(source);
        while (m.find()) {
            out.add(m.group(1).strip());
        }
        return out;
    }

    @Test
    void theScanCoversEveryModule() throws IOException {
        Path root = RepoPaths.root();
        List<Path> scanned = mainSources(root);
        List<String> unscanned = new ArrayList<>();
        for (String module : modules(root)) {
            if (scanned.stream()
                    .noneMatch(f -> f.startsWith(root.resolve(module).resolve("src/main")))) {
                unscanned.add(module);
            }
        }
        assertTrue(unscanned.isEmpty(), "modules whose main code the scan does not see: " + unscanned);
    }

    /** A path inside the repository: a top-level directory, then names; placeholders and globs end it. */
    private static Pattern repoPath(Path root) throws IOException {
        List<String> tops = new ArrayList<>(modules(root));
        tops.addAll(List.of("native", "include", "docs"));
        return Pattern.compile("(?<![\\w./-])((?:" + String.join("|", tops) + ")/[\\w./*-]*)");
    }

    @Test
    void everyRepositoryPathNamedExists() throws IOException {
        Path root = RepoPaths.root();
        List<Path> files = new ArrayList<>(mainSources(root));
        files.addAll(List.of(root.resolve("README.md"), root.resolve("pom.xml"), root.resolve("kvprefix")));
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(Files::isRegularFile)
                    .filter(p ->
                            !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .filter(p -> p.toString().endsWith(".md")
                            || p.getFileName().toString().equals("pom.xml"))
                    .forEach(files::add);
        }
        Pattern path = repoPath(root);
        List<String> broken = new ArrayList<>();
        for (Path f : files) {
            Matcher m = path.matcher(Files.readString(f));
            while (m.find()) {
                String named = m.group(1).replaceAll("[.]+$", "");
                boolean generated = named.contains("/target/") || named.endsWith("/target");
                if (!generated && !exists(root, named)) {
                    broken.add(root.relativize(f) + ": names " + named + ", which the repository does not have");
                }
            }
        }
        assertTrue(broken.isEmpty(), String.join("\n", broken));
    }

    @Test
    void thePathCheckSeesPathsAndGlobs() throws IOException {
        assertTrue(exists(RepoPaths.root(), "opstream/src/test/resources/replay/ex*_*.jsonl"));
        assertTrue(!exists(RepoPaths.root(), "opstream/src/test/resources/replay/nothing*.jsonl"));
        assertTrue(!exists(RepoPaths.root(), "benchmarks/src/main/java/io/kvprefix/cli"));
        Matcher m = repoPath(RepoPaths.root())
                .matcher(
                        "see `opstream/src/test/resources/replay/ex*.jsonl` and java/src/main, not my.java/x or native/<os>");
        List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add(m.group(1));
        }
        assertTrue(
                found.equals(List.of("opstream/src/test/resources/replay/ex*.jsonl", "java/src/main", "native/")),
                found.toString());
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

    private static List<String> modules(Path root) throws IOException {
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(root.resolve("pom.xml")));
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group(1).strip());
        }
        return out;
    }

    @Test
    void theCheckFindsABrokenCitation() {
        Matcher s = SECTION.matcher("rules in docs/SPEC.md sections 3 and 4.2, see docs/BENCHMARKS.md section 2");
        List<String> found = new ArrayList<>();
        while (s.find()) {
            found.add(s.group(1) + " " + s.group(2));
        }
        assertTrue(found.equals(List.of("docs/SPEC.md 3 and 4.2", "docs/BENCHMARKS.md 2")), found.toString());
    }

    private static String headings(Path doc) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (String line : Files.readAllLines(doc)) {
            if (line.startsWith("#")) {
                sb.append(line).append('\n');
            }
        }
        return sb.toString();
    }

    private static List<Path> mainSources(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(Files::isRegularFile)
                    .filter(p ->
                            !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .filter(p -> {
                        String r = root.relativize(p).toString();
                        return (r.contains("/src/main/") && r.endsWith(".java"))
                                || r.startsWith("native/")
                                || r.startsWith("include/");
                    })
                    .forEach(out::add);
        }
        return out;
    }

    private static Set<String> testClassNames(Path root) throws IOException {
        Set<String> names = new HashSet<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> p.toString().contains("/src/test/") && p.toString().endsWith(".java"))
                    .forEach(p -> names.add(p.getFileName().toString().replace(".java", "")));
        }
        return names;
    }
}
