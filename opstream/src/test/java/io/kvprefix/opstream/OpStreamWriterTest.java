package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchExplanation.Salt;
import io.kvprefix.MatchExplanation.Stop;
import io.kvprefix.Worker;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link OpStreamWriter}: the plain form of input lines, every id and hash an unsigned decimal. */
class OpStreamWriterTest {

    @Test
    void canonicalFormIsPlain() {
        Op op = new Op.Event(KvEvent.Stored.root(Worker.of(-1L, -1), new long[] {-5}, new long[] {Long.MIN_VALUE}));
        assertEquals(
                "{\"op\":\"stored\",\"worker\":18446744073709551615,\"dp_rank\":4294967295,\"parent_hash\":null,"
                        + "\"blocks\":[{\"block_hash\":18446744073709551611,\"tokens_hash\":9223372036854775808}]}",
                OpStreamWriter.line(op));
        assertEquals(
                "{\"op\":\"match\",\"token_ids\":[1,4294967295],\"block_size\":2,\"lora_name\":\"a\\\"b\"}",
                OpStreamWriter.line(new Op.TokenMatch(new int[] {1, -1}, 2, "a\"b", "")));
        assertEquals(
                "{\"op\":\"remove_worker\",\"worker\":9223372036854775808}",
                OpStreamWriter.line(new Op.Event(new KvEvent.RemoveWorker(Long.MIN_VALUE))));
    }

    @Test
    void explainLinesRoundTripAndTheAnswerIsOneLine() {
        OpStreamParser parser = new OpStreamParser();
        for (Op op : List.of(
                new Op.Explain(new Op.HashMatch(new long[] {-1, 7})),
                new Op.Explain(new Op.TokenMatch(new int[] {1, 2, 3, 4}, 2, "lora\u00fc", "ns")))) {
            String line = OpStreamWriter.line(op);
            assertEquals(op, parser.parse(line.getBytes(StandardCharsets.UTF_8)), line);
        }
        assertEquals(
                "{\"op\":\"explain\",\"local_hashes\":[18446744073709551615,7]}",
                OpStreamWriter.line(new Op.Explain(new Op.HashMatch(new long[] {-1, 7}))));
        MatchExplanation e = new MatchExplanation(
                3,
                List.of(
                        new MatchExplanation.WorkerStop(
                                Worker.of(-1L, 2), 0, Stop.OTHER_SALT, -1, new Salt("a\"b", null), 3),
                        new MatchExplanation.WorkerStop(Worker.of(1), 1, Stop.HOLE, 2, null, 0)));
        assertEquals(
                "{\"explain\":{\"blocks\":3,\"workers\":["
                        + "{\"worker\":1,\"dp_rank\":0,\"depth\":1,\"stop\":\"hole\",\"resumes_at\":2,\"salt\":null},"
                        + "{\"worker\":18446744073709551615,\"dp_rank\":2,\"depth\":0,\"stop\":\"other_salt\","
                        + "\"resumes_at\":null,\"salt\":{\"lora_name\":\"a\\\"b\",\"cache_namespace\":null,\"depth\":3}}]}}",
                OpStreamWriter.explanationLine(e));
    }
}
