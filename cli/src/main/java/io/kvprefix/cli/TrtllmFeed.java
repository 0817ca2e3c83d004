package io.kvprefix.cli;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.zmq.BatchDecodeException;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.DecodedBatch;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.TrtllmEventDecoder;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * {@code kvprefix listen --trtllm-events FILE|-=WORKER[/RANK][,block_size=N]}: TensorRT-LLM's
 * KV-cache events, one JSON line each ({@code json.dumps} of what {@code get_kv_cache_events()}
 * returns: one event or a list), read from a file or standard input until its end, decoded by
 * {@link TrtllmEventDecoder} and applied to the index. A deployment pipes its engine's events in,
 * for example a polling loop in the serving process that writes each drained list as one line.
 *
 * <p>Thread-safety: {@link #run} on one thread; {@link #toJson} from any thread (concurrent maps; a
 * snapshot while it runs is not atomic).
 */
final class TrtllmFeed implements Runnable {
    final String source;
    final long workerId;
    private final EngineEndpoint engine;
    private final TrtllmEventDecoder decoder;
    private final PrefixIndex index;
    private final Map<String, Long> applied = new ConcurrentSkipListMap<>();
    private final Map<DecodeIssue, Long> issues = new ConcurrentSkipListMap<>();
    private volatile long lines;
    private volatile String error;

    TrtllmFeed(String spec, PrefixIndex index) {
        this.index = index;
        String[] parts = spec.split(",", -1);
        int eq = parts[0].lastIndexOf('=');
        if (eq <= 0 || eq == parts[0].length() - 1) {
            throw new IllegalArgumentException(
                    "--trtllm-events: '" + spec + "' is not FILE|-=WORKER[/RANK][,block_size=N]");
        }
        this.source = parts[0].substring(0, eq);
        String w = parts[0].substring(eq + 1);
        int slash = w.indexOf('/');
        this.workerId = Check.parseU64(slash < 0 ? w : w.substring(0, slash), "--trtllm-events WORKER");
        OptionalInt rank = slash < 0
                ? OptionalInt.empty()
                : OptionalInt.of(
                        (int) Check.parseLong(w.substring(slash + 1), "--trtllm-events RANK", 0, 0xFFFF_FFFFL));
        int blockSize = 0;
        for (int i = 1; i < parts.length; i++) {
            if (!parts[i].startsWith("block_size=")) {
                throw new IllegalArgumentException("--trtllm-events: unknown option '" + parts[i] + "' (block_size=N)");
            }
            blockSize =
                    (int) Check.parseLong(parts[i].substring(11), "--trtllm-events block_size", 1, Integer.MAX_VALUE);
        }
        this.engine = new EngineEndpoint("inproc://trtllm-events", workerId, rank, Optional.empty(), "", "trtllm");
        this.decoder = new TrtllmEventDecoder(engine, blockSize);
        if (!source.equals("-")) {
            Check.inputFile("--trtllm-events", Check.path("--trtllm-events", source)); // before anything runs
        }
    }

    @Override
    public void run() {
        try (InputStream in = source.equals("-")
                ? System.in
                : new BufferedInputStream(Files.newInputStream(Path.of(source)), 1 << 16)) {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            for (int b = in.read(); ; b = in.read()) {
                if (b >= 0 && b != '\n') {
                    line.write(b);
                    continue;
                }
                if (line.size() > 0 && !line.toString().isBlank()) {
                    line(line.toByteArray());
                }
                line.reset();
                if (b < 0) {
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            error = "cannot read --trtllm-events '" + source + "': " + e.getMessage();
        }
    }

    private void line(byte[] bytes) {
        lines = lines + 1; // one writer
        DecodedBatch batch;
        try {
            batch = decoder.decode(bytes);
        } catch (BatchDecodeException e) {
            issues.merge(e.issue(), 1L, Long::sum);
            return;
        }
        for (DecodedBatch.Issue i : batch.issues()) {
            issues.merge(i.issue(), 1L, Long::sum);
        }
        for (KvEvent e : batch.events()) {
            EventStatus s = index.apply(e);
            String kind = switch (e) {
                case KvEvent.Stored st -> "stored";
                case KvEvent.StoredTokens st -> "stored";
                case KvEvent.Removed r -> "removed";
                case KvEvent.Copied c -> "copied";
                case KvEvent.Cleared c -> "cleared";
                case KvEvent.RemoveWorker r -> "remove_worker";
            };
            applied.merge(kind + "." + s.wireName(), 1L, Long::sum);
        }
    }

    /** A problem reading the source, or null. */
    String error() {
        return error;
    }

    /** {@code {"trtllm":{"source":..,"worker":..,"lines":N,"events":{"stored.ok":N,...},"issues":{...}}}}. */
    String toJson() {
        StringBuilder sb = new StringBuilder("{\"trtllm\":{\"source\":\"")
                .append(source.replace("\\", "\\\\").replace("\"", "\\\""))
                .append("\",\"worker\":")
                .append(Long.toUnsignedString(workerId))
                .append(",\"lines\":")
                .append(lines)
                .append(",\"events\":{");
        String sep = "";
        for (var e : applied.entrySet()) {
            sb.append(sep).append('"').append(e.getKey()).append("\":").append(e.getValue());
            sep = ",";
        }
        sb.append("},\"issues\":{");
        sep = "";
        for (var e : issues.entrySet()) {
            sb.append(sep)
                    .append('"')
                    .append(e.getKey().wireName())
                    .append("\":")
                    .append(e.getValue());
            sep = ",";
        }
        return sb.append("}}}").toString();
    }
}
