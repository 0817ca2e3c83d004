package io.kvprefix.zmq;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A watched file of engines, one a line: an {@code --engine} spec, or an engine to discover
 * ({@code http://HOST:PORT=WORKER[,format=F]}, {@link EngineDiscovery}); blank lines and lines
 * starting with {@code #} are skipped. Read every interval: an added line subscribes its engines, a
 * removed line unsubscribes them and clears their blocks, a changed line is both; an engine URL that
 * does not answer is asked again at the next read (docs/LISTENER.md section 5).
 *
 * <p>Thread-safety: every public method may be called from any thread; the reads run on one thread
 * of its own ({@code kvprefix-engines-file}).
 */
public final class EnginesFile implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.zmq");

    private final Path file;
    private final KvEventSubscriber subscriber;
    private final Duration discoveryTimeout;
    private final Map<String, List<EngineEndpoint>> current = new LinkedHashMap<>();
    private final Set<String> failed = new LinkedHashSet<>();
    private final ScheduledExecutorService timer;
    private String lastText;
    private long reloads;
    private long added;
    private long removed;

    private EnginesFile(Path file, KvEventSubscriber subscriber, Duration discoveryTimeout) {
        this.file = file;
        this.subscriber = subscriber;
        this.discoveryTimeout = discoveryTimeout;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-engines-file");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Reads {@code file} now (its engines subscribed before this returns), then again every
     * {@code every}.
     *
     * @throws IOException if the file cannot be read now
     */
    public static EnginesFile watch(Path file, KvEventSubscriber subscriber, Duration every) throws IOException {
        EnginesFile f = new EnginesFile(file, subscriber, Duration.ofSeconds(5));
        synchronized (f) {
            f.apply(Files.readString(file));
        }
        long ms = Math.max(1, every.toMillis());
        f.timer.scheduleWithFixedDelay(f::poll, ms, ms, TimeUnit.MILLISECONDS);
        return f;
    }

    private synchronized void poll() {
        try {
            String text = Files.readString(file);
            if (!text.equals(lastText) || !failed.isEmpty()) {
                apply(text);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "kvprefix: engines file " + file + ": " + e.getMessage() + " (the engines subscribed stay)");
        }
    }

    private void apply(String text) {
        lastText = text;
        reloads++;
        Set<String> wanted = new LinkedHashSet<>();
        for (String line : text.split("\n", -1)) {
            String l = line.strip();
            if (!l.isEmpty() && !l.startsWith("#")) {
                wanted.add(l);
            }
        }
        for (String gone : new ArrayList<>(current.keySet())) {
            if (!wanted.contains(gone)) {
                for (EngineEndpoint e : current.remove(gone)) {
                    if (subscriber.removeEngine(e.endpoint())) {
                        removed++;
                    }
                }
            }
        }
        failed.retainAll(wanted);
        for (String line : wanted) {
            if (!current.containsKey(line)) {
                add(line);
            }
        }
    }

    private void add(String line) {
        List<EngineEndpoint> engines;
        try {
            engines = line.startsWith("http://")
                    ? EngineDiscovery.discover(EngineDiscovery.Spec.parse(line), discoveryTimeout)
                    : List.of(EngineEndpoint.parse(line));
        } catch (IOException | IllegalArgumentException e) {
            if (failed.add(line)) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "kvprefix: engines file " + file + ": " + e.getMessage() + " (asked again at the next read)");
            }
            return;
        }
        List<EngineEndpoint> subscribed = new ArrayList<>();
        for (EngineEndpoint e : engines) {
            try {
                subscriber.addEngine(e);
                subscribed.add(e);
                added++;
            } catch (IllegalArgumentException ex) {
                LOG.log(System.Logger.Level.WARNING, "kvprefix: engines file " + file + ": " + ex.getMessage());
            }
        }
        failed.remove(line);
        current.put(line, subscribed);
    }

    /** The engines the file has subscribed now. */
    public synchronized List<EngineEndpoint> engines() {
        return current.values().stream().flatMap(List::stream).toList();
    }

    /** Lines that could not be turned into engines yet (bad, or an engine URL that did not answer). */
    public synchronized List<String> pending() {
        return List.copyOf(failed);
    }

    /** Reads so far, engines subscribed and unsubscribed so far, as {@code {reloads, added, removed}}. */
    public synchronized long[] counters() {
        return new long[] {reloads, added, removed};
    }

    /** Stops watching; the engines stay subscribed (the subscriber's to close). */
    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
