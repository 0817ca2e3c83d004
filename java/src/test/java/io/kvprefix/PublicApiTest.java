package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The public surface: one exported package, and javadoc with a thread-safety sentence on every public type. */
class PublicApiTest {

    @Test
    void exactlyOnePackageIsExported() throws IOException {
        Path classes;
        try {
            classes = Path.of(BlockHasher.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IOException(e);
        }
        Path moduleInfo = Files.isDirectory(classes)
                ? classes.resolve("module-info.class")
                : RepoPaths.root().resolve("java/target/classes/module-info.class");
        try (InputStream in = Files.newInputStream(moduleInfo)) {
            ModuleDescriptor d = ModuleDescriptor.read(in);
            assertEquals("io.kvprefix", d.name());
            Set<String> exports =
                    d.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
            assertEquals(Set.of("io.kvprefix"), exports);
            assertTrue(d.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified));
            assertTrue(
                    d.packages().stream()
                            .filter(p -> !p.equals("io.kvprefix"))
                            .allMatch(p -> p.startsWith("io.kvprefix.internal")),
                    "every other package lives under io.kvprefix.internal: " + d.packages());
        }
    }

    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(?m)^public\\s+(?:(?:final|abstract|sealed|non-sealed|static)\\s+)*(?:class|interface|enum|record|@interface)\\s+(\\w+)");

    @Test
    void everyPublicTypeHasJavadocWithAThreadSafetySentence() throws IOException {
        Path src = RepoPaths.root().resolve("java/src/main/java");
        List<String> missing = new ArrayList<>();
        try (Stream<Path> files = Files.walk(src)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java"))
                    .toList()) {
                String text = Files.readString(f);
                Matcher m = PUBLIC_TYPE.matcher(text);
                if (!m.find()) {
                    continue;
                }
                String before = text.substring(0, m.start());
                int doc = before.lastIndexOf("/**");
                String javadoc = doc < 0 ? "" : before.substring(doc);
                if (doc < 0
                        || !javadoc.contains("*/")
                        || !javadoc.toLowerCase().contains("thread-safe")
                                && !javadoc.toLowerCase().contains("thread-safety")) {
                    missing.add(src.relativize(f).toString());
                }
            }
        }
        assertTrue(missing.isEmpty(), "public types without javadoc naming their thread-safety: " + missing);
    }
}
