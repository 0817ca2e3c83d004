package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.source.tree.AnnotationTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The core's method cap ({@code SourceShapeTest} in {@code java/}) for the tools: no method of the main
 * sources of any other module of the build over {@value #MAX_METHOD_LINES} lines, but a picocli
 * command's {@code call()}, which reads validate, build, run, print, at most {@value #MAX_CALL_LINES}.
 * Measured by javac's own parser, from a method's first line (its annotations) to its closing brace.
 */
class ToolShapeTest {
    static final int MAX_METHOD_LINES = 60;
    static final int MAX_CALL_LINES = 80;
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");

    @Test
    void noToolMethodIsOverTheLimit() throws IOException {
        Path root = RepoPaths.root();
        List<Path> files = new ArrayList<>();
        List<String> modules = new ArrayList<>();
        Matcher m = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            String module = m.group(1).strip();
            Path src = root.resolve(module).resolve("src/main/java");
            if (!module.equals("java") && Files.isDirectory(src)) {
                modules.add(module);
                files.addAll(javaFiles(src));
            }
        }
        assertTrue(
                modules.containsAll(List.of("cli", "simulator", "benchmarks", "workloads", "opstream")), "" + modules);
        List<String> longOnes = longMethods(files);
        assertTrue(
                longOnes.isEmpty(),
                "methods over " + MAX_METHOD_LINES + " lines (a command's call() over " + MAX_CALL_LINES + ") in "
                        + modules + ": " + longOnes);
    }

    @Test
    void theMeasureSeesALongMethodAndALongCall() throws IOException {
        Path dir = Files.createTempDirectory("tool-shape");
        Path f = dir.resolve("Tool.java");
        StringBuilder sb = new StringBuilder("@picocli.CommandLine.Command(name = \"t\")\nclass Tool {\n");
        sb.append(method("call", 75)).append(method("run", 61)).append(method("ok", 58));
        sb.append("    static class Inner {\n").append(method("call", 62)).append("    }\n}\n");
        Files.writeString(f, sb.toString());
        assertEquals(List.of("Tool.java:80 run (63 lines)", "Tool.java:204 call (64 lines)"), longMethods(List.of(f)));
        Files.writeString(f, sb.toString().replace(method("call", 75), method("call", 79)));
        assertEquals(3, longMethods(List.of(f)).size(), "a command's call() of 81 lines is over too");
    }

    /** A method named {@code name} of {@code statements} lines between its header and its brace. */
    private static String method(String name, int statements) {
        return "    int " + name + "() {\n        int a = 0;\n" + "        a++;\n".repeat(statements - 2)
                + "        return a;\n    }\n";
    }

    /** Every method and constructor of {@code files} over its limit, as {@code File.java:LINE name (N lines)}. */
    static List<String> longMethods(List<Path> files) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> out = new ArrayList<>();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
            JavacTask task = (JavacTask) javac.getTask(
                    null, fm, d -> {}, List.of("-proc:none"), null, fm.getJavaFileObjectsFromPaths(files));
            SourcePositions pos = Trees.instance(task).getSourcePositions();
            for (CompilationUnitTree unit : task.parse()) {
                new TreePathScanner<Void, Void>() {
                    @Override
                    public Void visitMethod(MethodTree method, Void v) {
                        if (method.getBody() != null) {
                            long first = unit.getLineMap().getLineNumber(pos.getStartPosition(unit, method));
                            long last = unit.getLineMap().getLineNumber(pos.getEndPosition(unit, method));
                            long lines = last - first + 1;
                            Tree owner = getCurrentPath().getParentPath().getLeaf();
                            boolean command = method.getName().contentEquals("call")
                                    && method.getParameters().isEmpty()
                                    && owner instanceof ClassTree c
                                    && isCommand(c);
                            if (lines > (command ? MAX_CALL_LINES : MAX_METHOD_LINES)) {
                                out.add(Path.of(unit.getSourceFile().toUri()).getFileName() + ":" + first + " "
                                        + method.getName() + " (" + lines + " lines)");
                            }
                        }
                        return super.visitMethod(method, v);
                    }
                }.scan(unit, null);
            }
        }
        return out;
    }

    /** True if the class is annotated {@code @Command} (picocli's, by any spelling of its name). */
    private static boolean isCommand(ClassTree c) {
        for (AnnotationTree a : c.getModifiers().getAnnotations()) {
            Tree type = a.getAnnotationType();
            String name = type instanceof MemberSelectTree s
                    ? s.getIdentifier().toString()
                    : type instanceof IdentifierTree i ? i.getName().toString() : "";
            if (name.equals("Command")) {
                return true;
            }
        }
        return false;
    }

    private static List<Path> javaFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }
}
