package io.kvprefix;

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
 * Every document, section and test class that main code (Java, C, the header) cites exists, in every
 * module of the build, and every repository path that the documents, the build files, the launcher
 * and main code name exists: a reader who follows a citation finds what it names.
 */
class CitationsTest {
    private static final Pattern DOC = Pattern.compile("\\b((?:[\\w-]+/)*[\\w-]+\\.md)\\b");
    private static final Pattern SECTION = Pattern.compile(
            "\\b((?:[\\w-]+/)*[\\w-]+\\.md)\\s+sections?\\s+(\\d+(?:\\.\\d+)?(?:(?:,\\s*|\\s+and\\s+)\\d+(?:\\.\\d+)?)*)");
    private static final Pattern NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");
    private static final Pattern TEST_CLASS = Pattern.compile("\\b([A-Z]\\w*Test)\\b");

    @Test
    void everyCitationInMainCodeResolves() throws IOException {
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
            Matcher s = SECTION.matcher(text);
            while (s.find()) {
                Path doc = root.resolve(s.group(1));
                if (!Files.isRegularFile(doc)) {
                    continue; // reported above
                }
                String headings = headings(doc);
                Matcher n = NUMBER.matcher(s.group(2));
                while (n.find()) {
                    if (!Pattern.compile("(?m)^#+\\s+" + Pattern.quote(n.group()) + "[.\\s]")
                            .matcher(headings)
                            .find()) {
                        broken.add(
                                where + ": cites " + s.group(1) + " section " + n.group() + ", which it does not have");
                    }
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
