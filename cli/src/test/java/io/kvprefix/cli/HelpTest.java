package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.nio.file.Files;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command's help is clean and complete; {@code -V} prints the build's version. */
class HelpTest {

    @Test
    void everyCommandsHelpIsCleanAndItsSummaryAWholeSentence() {
        Map<String, CommandLine> commands = new CommandLine(new Main()).getSubcommands();
        for (var e : commands.entrySet()) {
            String name = e.getKey();
            String[] description = e.getValue().getCommandSpec().usageMessage().description();
            assertTrue(description.length > 0, name + " has a description");
            // The command list shows the first description line alone: it must be a whole sentence.
            String summary = description[0].strip();
            assertTrue(summary.endsWith("."), name + ": the summary must be a whole sentence: " + summary);
            assertTrue(summary.length() <= 100, name + ": a one-line summary, not a paragraph: " + summary);
            if (name.equals("jmh")) {
                continue; // "jmh --help" is JMH's own help
            }
            var r = CliRunner.run(name, "--help");
            assertEquals(0, r.exit(), name + ": " + r.err());
            assertEquals("", r.err(), name + " --help prints nothing on standard error (no picocli warning)");
            assertTrue(r.out().startsWith("Usage: kvprefix " + name), r.out());
            assertTrue(r.out().contains("--debug"), name + " --help lists --debug: " + r.out());
        }
        var top = CliRunner.run("--help");
        assertEquals(0, top.exit(), top.err());
        assertEquals("", top.err());
        for (String name : commands.keySet()) {
            assertTrue(top.out().contains("  " + name + " "), "the command list names " + name + ": " + top.out());
        }
    }

    @Test
    void versionIsTheProjectsVersion() throws Exception {
        String pom = Files.readString(RepoPaths.root().resolve("pom.xml"));
        Matcher m = Pattern.compile("<artifactId>kvprefix-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(pom);
        assertTrue(m.find(), "the parent pom's version");
        var r = CliRunner.run("-V");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("kvprefix " + m.group(1) + "\n"), r.out());
        System.setProperty("kvprefix.commit", "v0.1-3-gabcdef0-dirty");
        try {
            assertTrue(CliRunner.run("-V").out().startsWith("kvprefix " + m.group(1) + " (v0.1-3-gabcdef0-dirty)\n"));
        } finally {
            System.clearProperty("kvprefix.commit");
        }
    }
}
