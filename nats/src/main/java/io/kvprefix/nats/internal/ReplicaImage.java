package io.kvprefix.nats.internal;

import io.kvprefix.Worker;
import io.kvprefix.zmq.EngineEndpoint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a replica's snapshot carries besides the index, as the snapshot's metadata strings (issue 14
 * gives {@code PrefixIndex.snapshot(Path, Map)} a map of strings for this): the stream and the
 * sequence the snapshot covers, and per engine the next record expected, the last batch applied and
 * the workers it fed (which a later clear must clear). {@link #metadata} writes them, {@link #read}
 * reads them back and refuses a map that is not one.
 *
 * <p>Thread-safety: stateless.
 */
public final class ReplicaImage {
    static final String STREAM = "kvprefix.nats.stream";
    static final String SEQ = "kvprefix.nats.seq";
    static final String ENGINE = "kvprefix.nats.engine.";

    private ReplicaImage() {}

    /** The replica's state at a cut: where it is in the stream, and its engines. */
    public record State(String stream, long streamSeq, List<EngineFeed> feeds) {}

    /** The metadata of a snapshot cut after stream sequence {@code seq} with {@code feeds}. */
    public static Map<String, String> metadata(String stream, long seq, List<EngineFeed> feeds) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(STREAM, stream);
        m.put(SEQ, Long.toString(seq));
        for (EngineFeed f : feeds) {
            StringBuilder w = new StringBuilder();
            for (Worker x : f.workersFed()) {
                w.append(w.isEmpty() ? "" : ",")
                        .append(Long.toUnsignedString(x.workerId()))
                        .append('/')
                        .append(Integer.toUnsignedString(x.dpRank()));
            }
            m.put(
                    ENGINE + f.subject(),
                    "rec=" + f.nextRec() + ";seq=" + f.lastSeq() + ";workers=" + w + ";spec="
                            + f.engine().toSpec());
        }
        return m;
    }

    /**
     * The state saved in {@code metadata}.
     *
     * @throws IllegalArgumentException naming the fault if the map is not a replica's, or of another stream
     */
    public static State read(Map<String, String> metadata, String stream) {
        String s = metadata.get(STREAM);
        String seq = metadata.get(SEQ);
        if (s == null || seq == null) {
            throw new IllegalArgumentException("the snapshot was not written by a stream replica (no " + SEQ + ")");
        }
        if (!s.equals(stream)) {
            throw new IllegalArgumentException("the snapshot covers stream " + s + ", not " + stream);
        }
        List<EngineFeed> feeds = new ArrayList<>();
        for (var e : metadata.entrySet()) {
            if (!e.getKey().startsWith(ENGINE)) {
                continue;
            }
            String subject = e.getKey().substring(ENGINE.length());
            String v = e.getValue();
            int spec = v.indexOf(";spec=");
            String[] f = v.substring(0, spec < 0 ? v.length() : spec).split(";", -1);
            if (spec < 0
                    || f.length != 3
                    || !f[0].startsWith("rec=")
                    || !f[1].startsWith("seq=")
                    || !f[2].startsWith("workers=")) {
                throw new IllegalArgumentException("bad engine entry for " + subject + ": " + v);
            }
            Set<Worker> workers = new LinkedHashSet<>();
            String ws = f[2].substring("workers=".length());
            if (!ws.isEmpty()) {
                for (String w : ws.split(",")) {
                    int slash = w.indexOf('/');
                    workers.add(new Worker(
                            Long.parseUnsignedLong(w.substring(0, slash)),
                            Integer.parseUnsignedInt(w.substring(slash + 1))));
                }
            }
            EngineFeed feed = new EngineFeed(EngineEndpoint.parse(v.substring(spec + ";spec=".length())), subject);
            feed.restore(Long.parseLong(f[0].substring(4)), Long.parseLong(f[1].substring(4)), workers);
            feeds.add(feed);
        }
        return new State(s, Long.parseLong(seq), feeds);
    }
}
