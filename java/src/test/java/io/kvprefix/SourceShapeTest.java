package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The shape the project keeps its code in: no main source file over {@value #MAX_FILE_LINES}
 * lines in any module, and no method of the core library over {@value #MAX_METHOD_LINES} lines
 * (measured by javac's own parser, from the method's first line to its closing brace), and a
 * {@code package-info.java} in every package of every module, where its design prose lives.
 */
class SourceShapeTest {
    static final int MAX_FILE_LINES = 600;
    static final int MAX_METHOD_LINES = 60;

    @Test
    void noMainSourceFileIsOverTheLimit() throws IOException {
        Path root = RepoPaths.root();
        List<String> big = new ArrayList<>();
        for (Path f : javaFiles(root, true)) {
            long lines = Files.readAllLines(f).size();
            if (lines > MAX_FILE_LINES) {
                big.add(root.relativize(f) + " (" + lines + " lines)");
            }
        }
        assertTrue(big.isEmpty(), "main source files over " + MAX_FILE_LINES + " lines: " + big);
    }

    @Test
    void noLibraryMethodIsOverTheLimit() throws IOException {
        Path root = RepoPaths.root();
        List<String> longOnes = longMethods(javaFiles(root.resolve("java/src/main/java"), false), MAX_METHOD_LINES);
        assertTrue(longOnes.isEmpty(), "core library methods over " + MAX_METHOD_LINES + " lines: " + longOnes);
    }

    @Test
    void everyPackageHasAPackageInfo() throws IOException {
        Path root = RepoPaths.root();
        List<String> missing = new ArrayList<>();
        java.util.regex.Matcher modules = java.util.regex.Pattern.compile("<module>([^<]+)</module>")
                .matcher(Files.readString(root.resolve("pom.xml")));
        while (modules.find()) {
            Path src = root.resolve(modules.group(1).strip()).resolve("src/main/java");
            try (Stream<Path> dirs = Files.walk(src)) {
                for (Path d : dirs.filter(Files::isDirectory).toList()) {
                    boolean hasJava;
                    try (Stream<Path> files = Files.list(d)) {
                        hasJava =
                                files.anyMatch(f -> f.toString().endsWith(".java") && !f.endsWith("module-info.java"));
                    }
                    if (hasJava && !Files.isRegularFile(d.resolve("package-info.java"))) {
                        missing.add(root.relativize(d).toString());
                    }
                }
            }
        }
        assertTrue(
                missing.isEmpty(), "packages without a package-info.java (their design prose lives there): " + missing);
    }

    @Test
    void theMethodMeasureSeesALongMethod() throws IOException {
        Path dir = Files.createTempDirectory("shape");
        Path f = dir.resolve("Long.java");
        StringBuilder sb = new StringBuilder("class Long {\n    void f(\n            int a) {\n");
        for (int i = 0; i < 70; i++) {
            sb.append("        a++;\n");
        }
        sb.append("    }\n    void g() {}\n}\n");
        Files.writeString(f, sb.toString());
        List<String> found = longMethods(List.of(f), MAX_METHOD_LINES);
        assertTrue(found.size() == 1 && found.get(0).contains("f (73 lines)"), found.toString());
    }

    /** Every method and constructor in {@code files} longer than {@code limit} lines. */
    static List<String> longMethods(List<Path> files, int limit) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> out = new ArrayList<>();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
            JavacTask task = (JavacTask) javac.getTask(
                    null, fm, d -> {}, List.of("-proc:none"), null, fm.getJavaFileObjectsFromPaths(files));
            SourcePositions pos = Trees.instance(task).getSourcePositions();
            for (CompilationUnitTree unit : task.parse()) {
                new TreePathScanner<Void, Void>() {
                    @Override
                    public Void visitMethod(MethodTree m, Void v) {
                        if (m.getBody() != null) {
                            long first = unit.getLineMap().getLineNumber(pos.getStartPosition(unit, m));
                            long last = unit.getLineMap().getLineNumber(pos.getEndPosition(unit, m));
                            if (last - first + 1 > limit) {
                                out.add(Path.of(unit.getSourceFile().toUri()).getFileName() + ":" + first + " "
                                        + m.getName() + " (" + (last - first + 1) + " lines)");
                            }
                        }
                        return super.visitMethod(m, v);
                    }
                }.scan(unit, null);
            }
        }
        return out;
    }

    private static List<Path> javaFiles(Path dir, boolean everyModule) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.toString().endsWith(".java"))
                    .filter(p ->
                            !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .filter(p -> !everyModule || p.toString().contains("/src/main/"))
                    .toList();
        }
    }
}
