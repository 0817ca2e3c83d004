package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layout of the modules, read from their main sources: no cycle between the project's packages,
 * one exported package per module with everything else under its {@code internal} (for the modules
 * with a {@code module-info.java}, also in the compiled descriptor), no module reaching into another
 * module's {@code internal} packages, javadoc naming the thread-safety of every public type, and
 * every module of the build in the picture.
 *
 * <p>A package's dependencies are the project packages its files import (static imports and
 * wildcards too) or name fully qualified in code (comments and string literals are left out). An
 * {@code internal} package counts as part of the package that owns it: {@code io.kvprefix.internal.heap}
 * belongs to {@code io.kvprefix}, whose public types its implementations implement and whose factory
 * creates them, so that mutual dependency is the module's own business. Between those units there
 * must be no cycle at all.
 *
 * <p>It lives in the command line's module because that module depends on every other one: it is
 * built last, and sees the whole project.
 */
class ModuleLayoutTest {
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+)\\s*;");
    /** A project type, fully qualified: packages are lower case, the type starts upper case; or a wildcard. */
    private static final Pattern REFERENCE =
            Pattern.compile("\\bio\\.kvprefix((?:\\.[a-z_][a-z0-9_]*)*)(?:\\.[A-Z]\\w*|\\.\\*)");

    /**
     * Reaches into another module's internals that are there on purpose: {@code HashingBenchmark}
     * measures the raw FFM downcall, which only the core's internal binding exposes.
     */
    private static final Set<String> ALLOWED_INTERNAL_REACH = Set.of("io.kvprefix.bench -> io.kvprefix.internal.ffi");

    /** One main source file: its module, its package and the project packages it refers to. */
    private record Source(String module, Path file, String pkg, Set<String> uses) {}

    @Test
    void noPackageCycles() throws IOException {
        Map<String, Map<String, String>> graph = new TreeMap<>(); // unit -> (unit it uses -> a file that does)
        for (Source s : sources()) {
            String from = unit(s.pkg());
            graph.computeIfAbsent(from, k -> new TreeMap<>());
            for (String used : s.uses()) {
                String to = unit(used);
                if (!to.equals(from)) {
                    graph.get(from)
                            .putIfAbsent(
                                    to, RepoPaths.root().relativize(s.file()).toString());
                }
            }
        }
        List<String> cycles = new ArrayList<>();
        for (Set<String> scc : cycles(graph)) {
            StringBuilder sb = new StringBuilder("cycle between " + scc + ":");
            for (String a : scc) {
                graph.getOrDefault(a, Map.of()).forEach((b, file) -> {
                    if (scc.contains(b)) {
                        sb.append("\n    ")
                                .append(a)
                                .append(" -> ")
                                .append(b)
                                .append(" (")
                                .append(file)
                                .append(')');
                    }
                });
            }
            cycles.add(sb.toString());
        }
        assertTrue(cycles.isEmpty(), String.join("\n", cycles));
        assertTrue(graph.size() >= 6, "the check sees the project's packages: " + graph.keySet());
    }

    @Test
    void theCycleCheckFindsACycle() {
        Map<String, Map<String, String>> graph = new TreeMap<>();
        graph.put("a", Map.of("b", "A.java"));
        graph.put("b", Map.of("c", "B.java"));
        graph.put("c", Map.of("a", "C.java", "d", "C.java"));
        graph.put("d", Map.of());
        graph.put("e", Map.of("a", "E.java"));
        assertEquals(List.of(Set.of("a", "b", "c")), cycles(graph));
        assertEquals("io.kvprefix", unit("io.kvprefix.internal.heap"));
        assertEquals("io.kvprefix.zmq", unit("io.kvprefix.zmq.internal"));
        assertEquals("io.kvprefix.simulator", unit("io.kvprefix.simulator.internal"));
        Matcher m = REFERENCE.matcher(
                stripCommentsAndStrings(
                        "import io.kvprefix.opstream.Op; // io.kvprefix.bench.Gone\nString s = \"io.kvprefix.cli.Main\";\n"
                                + "x = io.kvprefix.workload.Trace.of(); import static io.kvprefix.Worker.of; import io.kvprefix.zmq.*;"));
        List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add("io.kvprefix" + m.group(1));
        }
        assertEquals(List.of("io.kvprefix.opstream", "io.kvprefix.workload", "io.kvprefix", "io.kvprefix.zmq"), found);
    }

    @Test
    void eachModuleExportsOnePackageAndKeepsTheRestInternal() throws IOException {
        Map<String, Set<String>> packages = new TreeMap<>();
        for (Source s : sources()) {
            packages.computeIfAbsent(s.module(), k -> new TreeSet<>()).add(s.pkg());
        }
        List<String> wrong = new ArrayList<>();
        Set<String> exported = new TreeSet<>();
        for (var e : packages.entrySet()) {
            Set<String> roots = new TreeSet<>();
            for (String p : e.getValue()) {
                roots.add(unit(p));
            }
            if (roots.size() != 1 || !e.getValue().contains(roots.iterator().next())) {
                wrong.add(e.getKey() + "/ has " + e.getValue() + " (one package, the rest under its .internal)");
            } else if (!exported.add(roots.iterator().next())) {
                wrong.add(e.getKey() + "/ exports " + roots + ", which another module exports too");
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /** A class of each module that has a module descriptor, to find its compiled descriptor by. */
    private static final Map<String, Class<?>> DESCRIBED = Map.of(
            "java", io.kvprefix.PrefixIndex.class,
            "listener", io.kvprefix.zmq.EngineEndpoint.class,
            "nats", io.kvprefix.nats.FleetStream.class,
            "metrics", io.kvprefix.metrics.MetricsServer.class);

    @Test
    void theModuleDescriptorsExportTheModulesOnePackage() throws Exception {
        Set<String> withDescriptor = new TreeSet<>();
        for (String module : modules()) {
            if (Files.isRegularFile(RepoPaths.root().resolve(module).resolve("src/main/java/module-info.java"))) {
                withDescriptor.add(module);
            }
        }
        assertEquals(new TreeSet<>(DESCRIBED.keySet()), withDescriptor, "the modules with a module-info.java");
        Map<String, Set<String>> units = new TreeMap<>();
        for (Source s : sources()) {
            units.computeIfAbsent(s.module(), k -> new TreeSet<>()).add(unit(s.pkg()));
        }
        for (var e : DESCRIBED.entrySet()) {
            Path location = Path.of(e.getValue()
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            ModuleDescriptor d =
                    ModuleFinder.of(location).findAll().iterator().next().descriptor();
            Set<String> exports = new TreeSet<>();
            d.exports().forEach(x -> exports.add(x.source() + (x.isQualified() ? " to " + x.targets() : "")));
            assertEquals(units.get(e.getKey()), exports, e.getKey() + "/ module " + d.name() + " exports");
            assertTrue(d.opens().isEmpty(), e.getKey() + "/ opens nothing: " + d.opens());
        }
    }

    @Test
    void noModuleReachesIntoAnotherModulesInternals() throws IOException {
        List<Source> sources = sources();
        Map<String, String> moduleOf = new HashMap<>();
        for (Source s : sources) {
            moduleOf.put(s.pkg(), s.module());
        }
        Set<String> reaches = new TreeSet<>();
        for (Source s : sources) {
            for (String used : s.uses()) {
                boolean internal = used.contains(".internal");
                if (internal && !s.module().equals(moduleOf.get(used))) {
                    String edge = s.pkg() + " -> " + used;
                    if (!ALLOWED_INTERNAL_REACH.contains(edge)) {
                        reaches.add(edge + " (" + RepoPaths.root().relativize(s.file()) + ")");
                    }
                }
            }
        }
        assertTrue(reaches.isEmpty(), "internal packages used from another module: " + reaches);
    }

    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(?m)^public\\s+(?:(?:final|abstract|sealed|non-sealed|static)\\s+)*(?:class|interface|enum|record|@interface)\\s+(\\w+)");

    /** The house rule the core's PublicApiTest holds its own types to, for every module. */
    @Test
    void everyPublicTypeHasJavadocWithAThreadSafetySentence() throws IOException {
        List<String> missing = new ArrayList<>();
        for (Source s : sources()) {
            String text = Files.readString(s.file());
            Matcher m = PUBLIC_TYPE.matcher(text);
            if (!m.find()) {
                continue;
            }
            String before = text.substring(0, m.start());
            int doc = before.lastIndexOf("/**");
            String javadoc = doc < 0 ? "" : before.substring(doc).toLowerCase();
            if (!javadoc.contains("*/") || !javadoc.contains("thread-safe") && !javadoc.contains("thread-safety")) {
                missing.add(RepoPaths.root().relativize(s.file()).toString());
            }
        }
        assertTrue(missing.isEmpty(), "public types without javadoc naming their thread-safety: " + missing);
    }

    @Test
    void everyModuleOfTheBuildIsChecked() throws IOException {
        Set<String> seen = new TreeSet<>();
        for (Source s : sources()) {
            seen.add(s.module());
        }
        assertEquals(new TreeSet<>(modules()), seen, "every module of the root pom.xml has main sources here");
        assertTrue(
                seen.containsAll(List.of(
                        "java",
                        "listener",
                        "nats",
                        "metrics",
                        "opstream",
                        "workloads",
                        "simulator",
                        "tokenizer",
                        "benchmarks",
                        "standin",
                        "service",
                        "server",
                        "epp",
                        "spring",
                        "cli")),
                "" + seen);
    }

    // ------------------------------------------------------------------ reading the sources

    /** The modules the root pom.xml builds. */
    private static List<String> modules() throws IOException {
        Matcher m = MODULE.matcher(Files.readString(RepoPaths.root().resolve("pom.xml")));
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group(1).strip());
        }
        return out;
    }

    private static List<Source> sources() throws IOException {
        List<Source> out = new ArrayList<>();
        for (String module : modules()) {
            Path src = RepoPaths.root().resolve(module).resolve("src/main/java");
            if (!Files.isDirectory(src)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(src)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java"))
                        .sorted()
                        .toList()) {
                    if (f.endsWith("module-info.java")) {
                        continue;
                    }
                    String code = stripCommentsAndStrings(Files.readString(f));
                    Matcher p = PACKAGE.matcher(code);
                    if (!p.find()) {
                        continue; // a package-info without a package line cannot exist; nothing to read
                    }
                    Set<String> uses = new TreeSet<>();
                    Matcher r = REFERENCE.matcher(code);
                    while (r.find()) {
                        uses.add("io.kvprefix" + r.group(1));
                    }
                    uses.remove(p.group(1));
                    out.add(new Source(module, f, p.group(1), uses));
                }
            }
        }
        return out;
    }

    /** The package with any {@code .internal} suffix removed: the unit a package belongs to. */
    private static String unit(String pkg) {
        int i = pkg.indexOf(".internal");
        return i < 0 ? pkg : pkg.substring(0, i);
    }

    /** Java source with comments, string and character literals (and text blocks) blanked out. */
    static String stripCommentsAndStrings(String s) {
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (s.startsWith("//", i)) {
                while (i < s.length() && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (s.startsWith("/*", i)) {
                int end = s.indexOf("*/", i + 2);
                i = end < 0 ? s.length() : end + 2;
                out.append(' ');
            } else if (s.startsWith("\"\"\"", i)) {
                int end = s.indexOf("\"\"\"", i + 3);
                i = end < 0 ? s.length() : end + 3;
                out.append("\"\"");
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < s.length() && s.charAt(j) != c) {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                i = j + 1;
                out.append(c).append(c);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    // ------------------------------------------------------------------ cycles

    /** The strongly connected components of more than one node (Tarjan), each sorted, in order of their first node. */
    static List<Set<String>> cycles(Map<String, Map<String, String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        Map<String, Set<String>> found = new LinkedHashMap<>();
        int[] counter = {0};
        for (String v : graph.keySet()) {
            if (!index.containsKey(v)) {
                strongConnect(v, graph, index, low, stack, onStack, found, counter);
            }
        }
        List<Set<String>> out = new ArrayList<>();
        new TreeMap<>(found).forEach((k, v) -> out.add(v));
        return out;
    }

    private static void strongConnect(
            String v,
            Map<String, Map<String, String>> graph,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            Set<String> onStack,
            Map<String, Set<String>> found,
            int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]);
        counter[0]++;
        stack.push(v);
        onStack.add(v);
        for (String w : graph.getOrDefault(v, Map.of()).keySet()) {
            if (!index.containsKey(w)) {
                strongConnect(w, graph, index, low, stack, onStack, found, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> scc = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                scc.add(w);
            } while (!w.equals(v));
            if (scc.size() > 1) {
                found.put(((TreeSet<String>) scc).first(), scc);
            }
        }
    }
}
