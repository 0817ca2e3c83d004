package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.testing.LineVariants;
import io.kvprefix.opstream.testing.OpStreamGenerator;
import io.kvprefix.opstream.testing.ReferenceOutput;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.testing.TestScale;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The replay path end to end against the oracle: random op streams (with malformed lines) rendered
 * as JSON with every valid spelling ({@link LineVariants#render}), replayed by {@link Replayer}
 * through every index implementation, must print exactly the oracle's lines.
 */
class ReplayDifferentialTest {

    /** Every index path, by the names {@code kvprefix replay --impl} gives them ({@link Implementations}). */
    private static final List<String> IMPLEMENTATIONS = Implementations.names();

    @Test
    void everyImplementationPrintsTheOraclesLines() throws Exception {
        long master = TestScale.seed();
        SplittableRandom seeds = new SplittableRandom(master);
        int streams = TestScale.iterations(40, 400);
        for (int i = 0; i < streams; i++) {
            long seed = seeds.nextLong();
            IndexConfig config = IndexConfig.builder()
                    .maxWorkers(i % 3 == 0 ? 8 : 1024)
                    .jumpSize(1 + (i % 4) * 3)
                    .build();
            OpStreamGenerator.Options options = OpStreamGenerator.Options.random(
                            new SplittableRandom(seed), config, 1, 12)
                    .malformedRate(0.05);
            List<Op> ops = new OpStreamGenerator(seed, options).generate();
            Random render = new Random(seed);
            StringBuilder in = new StringBuilder();
            for (Op op : ops) {
                in.append(LineVariants.render(op, render)).append('\n');
            }
            byte[] input = in.toString().getBytes(StandardCharsets.UTF_8);
            List<String> expected;
            try (PrefixIndex oracle = new OracleIndex(config)) {
                expected = ReferenceOutput.lines(ops, oracle);
            }
            for (String impl : IMPLEMENTATIONS) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (PrefixIndex index = Implementations.create(impl, config)) {
                    new Replayer(index).log(line -> {}).run(new ByteArrayInputStream(input), out);
                }
                List<String> actual =
                        out.toString(StandardCharsets.UTF_8).lines().toList();
                assertEquals(expected.size(), actual.size(), impl + ": one output line per input line");
                for (int k = 0; k < expected.size(); k++) {
                    if (!expected.get(k).equals(actual.get(k))) {
                        assertEquals(
                                expected.get(k),
                                actual.get(k),
                                impl + ", stream " + i + " (master " + TestScale.replay(master) + "), line " + (k + 1)
                                        + ": " + input(input, k));
                    }
                }
            }
        }
    }

    /** Input line {@code line} (lines end at \n only), with control characters made visible. */
    private static String input(byte[] all, int line) {
        String[] lines = new String(all, StandardCharsets.UTF_8).split("\n", -1);
        StringBuilder sb = new StringBuilder();
        for (char c : lines[line].toCharArray()) {
            sb.append(c < 0x20 ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return sb.toString();
    }
}
