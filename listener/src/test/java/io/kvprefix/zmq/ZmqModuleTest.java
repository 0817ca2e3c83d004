package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The listener's module descriptor as compiled: module {@code io.kvprefix.zmq}, one exported
 * package, every other package under {@code io.kvprefix.zmq.internal}, and requirements that the
 * real jars satisfy on a module path (msgpack-core by the name the JDK derives from its file).
 */
class ZmqModuleTest {

    private static Path classes() throws URISyntaxException {
        return Path.of(EngineEndpoint.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    }

    private static ModuleDescriptor descriptor() throws IOException, URISyntaxException {
        Path c = classes();
        if (Files.isDirectory(c)) {
            try (InputStream in = Files.newInputStream(c.resolve("module-info.class"))) {
                return ModuleDescriptor.read(in);
            }
        }
        return ModuleFinder.of(c).findAll().iterator().next().descriptor();
    }

    @Test
    void exactlyOnePackageIsExported() throws Exception {
        ModuleDescriptor d = descriptor();
        assertEquals("io.kvprefix.zmq", d.name());
        assertEquals(
                Set.of("io.kvprefix.zmq"),
                d.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet()));
        assertTrue(d.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified));
        assertTrue(d.opens().isEmpty(), "nothing is opened: " + d.opens());
        assertTrue(
                d.packages().stream()
                        .allMatch(p -> p.equals("io.kvprefix.zmq") || p.startsWith("io.kvprefix.zmq.internal")),
                "every other package lives under io.kvprefix.zmq.internal: " + d.packages());
        Map<String, Set<ModuleDescriptor.Requires.Modifier>> requires = d.requires().stream()
                .filter(r -> !r.name().equals("java.base"))
                .collect(Collectors.toMap(ModuleDescriptor.Requires::name, ModuleDescriptor.Requires::modifiers));
        assertEquals(
                Map.of(
                        "io.kvprefix",
                        Set.of(ModuleDescriptor.Requires.Modifier.TRANSITIVE),
                        "org.zeromq.jeromq",
                        Set.of(),
                        "msgpack.core",
                        Set.of(),
                        "java.net.http", // EngineDiscovery asks an engine where it publishes
                        Set.of()),
                requires);
    }

    /** The descriptor resolves against the jars the build uses: every requirement is met, by name. */
    @Test
    void theModuleResolvesOnAModulePath() throws Exception {
        List<Path> path = new ArrayList<>();
        path.add(classes());
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry);
            String name = p.getFileName().toString();
            boolean library = name.endsWith(".jar")
                    && (name.startsWith("jeromq-")
                            || name.startsWith("jnacl-")
                            || name.startsWith("msgpack-core-")
                            || name.startsWith("zero-allocation-hashing-")
                            || name.startsWith("fastutil-core-")
                            || name.matches("kvprefix-[0-9].*[0-9T](-SNAPSHOT)?\\.jar"));
            boolean core = Files.isRegularFile(p.resolve("module-info.class")) && !p.equals(classes());
            if (library || core) {
                path.add(p);
            }
        }
        Configuration cf = ModuleLayer.boot()
                .configuration()
                .resolve(ModuleFinder.of(path.toArray(Path[]::new)), ModuleFinder.of(), Set.of("io.kvprefix.zmq"));
        Set<String> resolved = new TreeSet<>();
        for (ResolvedModule m : cf.modules()) {
            resolved.add(m.name());
        }
        assertTrue(
                resolved.containsAll(Set.of("io.kvprefix.zmq", "io.kvprefix", "org.zeromq.jeromq", "msgpack.core")),
                "resolved " + resolved + " from " + path);
    }
}
