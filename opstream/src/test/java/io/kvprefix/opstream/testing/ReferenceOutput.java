package io.kvprefix.opstream.testing;

import io.kvprefix.EventStatus;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The result lines {@code kvprefix replay} must print for a stream (docs/SPEC.md section 5), computed
 * without reading any line: each op is applied to a reference index (normally the oracle) directly,
 * and its answer written by {@link OpStreamWriter}. Tests compare what the replayer printed for the
 * stream's text with these.
 *
 * <p>Thread-safety: stateless.
 */
public final class ReferenceOutput {
    private ReferenceOutput() {}

    /**
     * One line per op, computed by applying {@code ops} to {@code reference} (which they change): a
     * status per event, {@code invalid_input} per invalid line, scores per match (token matches hashed
     * with the reference's seeds and the op's block size and salt).
     */
    public static List<String> lines(List<Op> ops, PrefixIndex reference) {
        List<String> out = new ArrayList<>(ops.size());
        MatchResult r = new MatchResult();
        for (Op op : ops) {
            out.add(
                    switch (op) {
                        case Op.Event e -> OpStreamWriter.statusLine(reference.apply(e.event()));
                        case Op.Invalid i -> OpStreamWriter.statusLine(EventStatus.INVALID_INPUT);
                        case Op.HashMatch m -> {
                            reference.match(m.localHashes(), 0, m.localHashes().length, r);
                            yield OpStreamWriter.scoresLine(r);
                        }
                        case Op.TokenMatch m -> {
                            reference.match(
                                    m.tokenIds(), 0, m.tokenIds().length, m.hasher(reference.config()), m.mm(), r);
                            yield OpStreamWriter.scoresLine(r);
                        }
                        case Op.Explain x -> OpStreamWriter.explanationLine(x.on(reference));
                    });
        }
        return out;
    }
}
