package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
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
}
