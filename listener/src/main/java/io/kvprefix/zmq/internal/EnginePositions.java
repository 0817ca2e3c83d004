package io.kvprefix.zmq.internal;

import io.kvprefix.Worker;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Where each engine's stream stood when a snapshot was taken, kept in the snapshot's metadata
 * (docs/SNAPSHOT.md): one entry per engine that had applied a batch, key
 * {@code kvprefix.zmq.engine:ENDPOINT}, value {@code WORKER_ID LAST_APPLIED RANK,RANK,... [HASH]} (unsigned
 * decimals, ranks ascending; the ranks of that worker id the engine fed, {@code -} for none; HASH, when
 * known, the last batch's hash in hex). A restored subscriber goes on after {@code LAST_APPLIED} for an
 * engine at the same endpoint with the same worker id, and with HASH first checks that the engine still
 * has that very batch (a restarted engine whose numbering passed the saved point is caught:
 * docs/LISTENER.md section 4). Files written before HASH existed (three fields) are read as before.
 *
 * <p>Thread-safety: stateless.
 */
public final class EnginePositions {
    private EnginePositions() {}

    static final String PREFIX = "kvprefix.zmq.engine:";

    /** One engine's position: the last batch applied, and the workers it fed. */
    public record Position(long workerId, long lastApplied, List<Worker> workersFed, OptionalLong lastHash) {}

    /** The metadata entries for {@code sessions} (on the I/O thread, so they agree with the index). */
    public static Map<String, String> encode(List<EngineSession> sessions) {
        Map<String, String> out = new LinkedHashMap<>();
        for (EngineSession s : sessions) {
            long last = s.lastApplied();
            if (last < 0) {
                continue; // nothing applied yet: a restart starts this engine afresh
            }
            // ranks in ascending order, whatever order their first batches arrived in: the same state
            // always writes the same metadata
            StringBuilder ranks = new StringBuilder();
            s.workersFed().stream()
                    .filter(w -> w.workerId() == s.engine().workerId())
                    .mapToInt(Worker::dpRank)
                    .boxed()
                    .sorted(Integer::compareUnsigned)
                    .forEach(r -> ranks.append(ranks.isEmpty() ? "" : ",").append(Integer.toUnsignedString(r)));
            out.put(
                    PREFIX + s.engine().endpoint(),
                    Long.toUnsignedString(s.engine().workerId()) + " " + last + " " + (ranks.isEmpty() ? "-" : ranks)
                            + (s.lastHash().isPresent()
                                    ? " " + Long.toHexString(s.lastHash().getAsLong())
                                    : ""));
        }
        return out;
    }

    /**
     * The positions in {@code metadata}, by endpoint; entries that are not the listener's are
     * ignored, and one that cannot be read is left out (that engine starts afresh) and reported
     * through {@code complaints}.
     */
    public static Map<String, Position> decode(Map<String, String> metadata, List<String> complaints) {
        Map<String, Position> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (!e.getKey().startsWith(PREFIX)) {
                continue;
            }
            String endpoint = e.getKey().substring(PREFIX.length());
            try {
                String[] f = e.getValue().split(" ", -1);
                if (f.length != 3 && f.length != 4) {
                    throw new IllegalArgumentException("3 or 4 fields expected");
                }
                OptionalLong hash =
                        f.length == 4 ? OptionalLong.of(Long.parseUnsignedLong(f[3], 16)) : OptionalLong.empty();
                long id = Long.parseUnsignedLong(f[0]);
                long last = Long.parseLong(f[1]);
                if (last < 0) {
                    throw new IllegalArgumentException("a negative batch number");
                }
                List<Worker> fed = new ArrayList<>();
                if (!f[2].equals("-")) {
                    for (String r : f[2].split(",", -1)) {
                        fed.add(new Worker(id, Integer.parseUnsignedInt(r)));
                    }
                }
                out.put(endpoint, new Position(id, last, List.copyOf(fed), hash));
            } catch (IllegalArgumentException ex) {
                complaints.add("snapshot metadata of " + endpoint + " cannot be read ('" + e.getValue() + "': "
                        + ex.getMessage() + "); that engine starts afresh");
            }
        }
        return out;
    }
}
