package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.internal.ffi.NativeLibrary;
import io.kvprefix.testing.HashMain;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The loader and the native / portable / auto switch, each in a fresh child JVM (the library is
 * loaded once per JVM).
 */
class NativeLoadingTest {

    record Run(int exit, String out, String err) {}

    private static Run run(String... props) throws IOException, InterruptedException {
        return runMain(List.of(), props);
    }

    private static Run runMain(List<String> args, String... props) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(
                java,
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-Djava.util.logging.SimpleFormatter.format=%4$s: %5$s%n"));
        cmd.addAll(List.of(props));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), HashMain.class.getName()));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), out.strip(), err.strip());
    }

    @Test
    void nativeFailsNamingWhereItLooked() throws Exception {
        Run r = run("-Dkvprefix.library.path=/nonexistent/dir/libkvprefix.so", "-Dkvprefix.impl=native");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("kvprefix.impl=native"), r.err());
        assertTrue(r.err().contains("/nonexistent/dir/libkvprefix.so: no such file"), r.err());
    }

    @Test
    void autoFallsBackToPortableWithOneLogLine() throws Exception {
        Run r = run("-Dkvprefix.library.path=/nonexistent/dir/libkvprefix.so", "-Dkvprefix.impl=auto");
        assertEquals(0, r.exit(), r.err());
        assertEquals("PORTABLE 14643705804678351452", r.out());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(
                r.err().startsWith("WARNING: kvprefix: native library unavailable, using the portable Java path"),
                r.err());
        assertTrue(r.err().contains("/nonexistent/dir/libkvprefix.so"), r.err());
    }

    @Test
    void portableNeverLoadsAndSaysNothing() throws Exception {
        Run r = run("-Dkvprefix.library.path=/nonexistent/dir/libkvprefix.so", "-Dkvprefix.impl=portable");
        assertEquals(0, r.exit(), r.err());
        assertEquals("PORTABLE 14643705804678351452", r.out());
        assertEquals("", r.err());
    }

    @Test
    void explicitPathAndPackagedLibraryBothLoad() throws Exception {
        Run packaged = run("-Dkvprefix.impl=native");
        assertEquals(0, packaged.exit(), packaged.err());
        assertEquals("NATIVE 14643705804678351452", packaged.out());
        Path lib = Path.of(NativeLibrary.class
                .getResource("/native/" + NativeLibrary.platform() + "/libkvprefix.so")
                .toURI());
        Run explicit = run("-Dkvprefix.library.path=" + lib, "-Dkvprefix.impl=native");
        assertEquals(0, explicit.exit(), explicit.err());
        assertEquals("NATIVE 14643705804678351452", explicit.out());
    }

    @Test
    void onlyTheTestBuildCountsCalls() throws Exception {
        Run packaged = runMain(List.of("--calls"), "-Dkvprefix.impl=native");
        assertEquals(0, packaged.exit(), packaged.err());
        assertEquals("NATIVE 14643705804678351452 calls=not-counted", packaged.out());
        Run testBuild = runMain(
                List.of("--calls"),
                "-Dkvprefix.impl=native",
                "-Dkvprefix.library.path=" + System.getProperty("kvprefix.library.path"));
        assertEquals(0, testBuild.exit(), testBuild.err());
        assertEquals("NATIVE 14643705804678351452 calls=counted", testBuild.out());
    }

    @Test
    void aFileThatIsNotALibraryIsReportedNotCrashed() throws Exception {
        Path notLib = java.nio.file.Files.createTempFile("kvprefix-not-a-lib", ".so");
        try {
            java.nio.file.Files.writeString(notLib, "not an ELF file");
            Run r = run("-Dkvprefix.library.path=" + notLib, "-Dkvprefix.impl=auto");
            assertEquals(0, r.exit(), r.err());
            assertEquals("PORTABLE 14643705804678351452", r.out());
            assertTrue(r.err().contains(notLib.toString()), r.err());
        } finally {
            java.nio.file.Files.deleteIfExists(notLib);
        }
    }

    @Test
    void implementationNamesParse() {
        assertEquals(Implementation.NATIVE, Implementation.parse("Native"));
        assertEquals(Implementation.PORTABLE, Implementation.parse("portable"));
        assertEquals(Implementation.AUTO, Implementation.parse(" auto "));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> Implementation.parse("fast"));
        assertTrue(e.getMessage().contains("auto, native or portable"));
    }
}
