package io.kvprefix.zmq.internal;

import java.lang.System.Logger.Level;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The subscriber's I/O thread: owns the ZMQ context and every socket, polls them, feeds each
 * engine's batches to its {@link EngineSession}, and runs commands (add or remove an engine)
 * submitted from other threads. Sockets are created, used and closed on this thread only, as ZMQ
 * requires.
 *
 * <p>Thread-safety: {@link #submit} and {@link #stop} may be called from any thread; everything
 * else runs on the loop's own thread.
 */
public final class SubscriberLoop implements Runnable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.zmq");
    /** Poll timeout: the longest a command or a replay timeout waits to be noticed. */
    private static final int POLL_MILLIS = 20;
    /** Messages read from one socket per poll, so one busy engine cannot starve the others. */
    private static final int BURST = 256;
    /** What a poll item is: a live socket's monitor, a live socket, a replay socket. */
    private static final byte MONITOR = 0;

    private static final byte LIVE = 1;

    private final String threadPrefix;
    private final BlockingQueue<Command> commands = new LinkedBlockingQueue<>();
    private final List<EngineSession> sessions = new ArrayList<>();
    private volatile boolean stopping;
    private volatile boolean finished;
    private ZContext context;
    private Selector selector;
    private ZMQ.PollItem[] items = new ZMQ.PollItem[0];
    private EngineSession[] owners = new EngineSession[0];
    private byte[] kinds = new byte[0];
    private boolean socketsChanged = true;

    /** @param threadPrefix prefix of the names of the threads ZMQ starts (its I/O and reaper threads) */
    public SubscriberLoop(String threadPrefix) {
        this.threadPrefix = threadPrefix;
    }

    /**
     * Runs {@code command} on the loop thread with the loop's context and returns its result.
     *
     * @throws IllegalStateException if the loop has stopped
     */
    public <T> CompletableFuture<T> submit(Function<Context, T> command) {
        CompletableFuture<T> f = new CompletableFuture<>();
        commands.add(new Command(
                () -> {
                    try {
                        f.complete(command.apply(new Context()));
                    } catch (RuntimeException | Error e) {
                        f.completeExceptionally(e);
                    }
                },
                f));
        if (finished || stopping) {
            failLateCommands();
        }
        return f;
    }

    private record Command(Runnable body, CompletableFuture<?> result) {}

    private void failLateCommands() {
        for (Command c; (c = commands.poll()) != null; ) {
            c.result().completeExceptionally(new IllegalStateException("subscriber closed"));
        }
    }

    /** What a command may do on the loop thread. */
    public final class Context {
        private Context() {}

        /** Opens {@code s}'s sockets, starts polling them, and lets it ask its engine for what it has. */
        public void add(EngineSession s) {
            s.open(context, () -> socketsChanged = true);
            sessions.add(s);
            socketsChanged = true;
            s.start(System.nanoTime());
        }

        /** The sessions being polled, in the order they were added. */
        public List<EngineSession> sessions() {
            return List.copyOf(sessions);
        }

        /** Stops polling {@code s}, makes it forget what it fed into the index, and closes its sockets. */
        public void remove(EngineSession s) {
            sessions.remove(s);
            boolean shared = sessions.stream()
                    .anyMatch(o -> o.engine().workerId() == s.engine().workerId());
            s.forget(shared);
            s.closeSockets();
            socketsChanged = true;
        }
    }

    /** Asks the loop to stop; it closes every socket and the context on its way out. */
    public void stop() {
        stopping = true;
    }

    @Override
    public void run() {
        try {
            context = new ZContext(1);
            context.setLinger(0);
            context.setThreadFactor((runnable, name) -> {
                Thread t = new Thread(runnable, threadPrefix + name);
                t.setDaemon(true);
                return t;
            });
            // JeroMQ's own threads report their errors here rather than printing stack traces; during
            // shutdown it can race itself (a termination ack to a closed mailbox), which is harmless.
            Thread.UncaughtExceptionHandler report = (t, e) -> LOG.log(
                    stopping ? Level.DEBUG : Level.WARNING, "kvprefix-zmq: ZMQ thread " + t.getName() + ": " + e);
            context.setUncaughtExceptionHandler(report);
            context.setNotificationExceptionHandler(report);
            selector = Selector.open(); // ours to close (ZContext.createSelector is deprecated)
            while (!stopping) {
                try {
                    iterate();
                } catch (RuntimeException e) {
                    // Never let one bad message or socket error end the subscription; slow down a little instead.
                    LOG.log(Level.WARNING, "kvprefix-zmq: error in the subscriber loop (continuing): " + e, e);
                    pause();
                }
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "kvprefix-zmq: the subscriber loop stopped: " + t, t);
        } finally {
            shutdown();
        }
    }

    private void iterate() {
        for (Command c; (c = commands.poll()) != null; ) {
            c.body().run();
        }
        if (socketsChanged) {
            rebuildPollItems();
        }
        if (items.length == 0) {
            try {
                Command c = commands.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
                if (c != null) {
                    c.body().run();
                }
            } catch (InterruptedException e) {
                stopping = true;
            }
        } else if (ZMQ.poll(selector, items, POLL_MILLIS) > 0) {
            long now = System.nanoTime();
            for (int i = 0; i < items.length; i++) {
                if (items[i].isReadable()) {
                    // read through the session: a socket replaced earlier in this round is not read here
                    switch (kinds[i]) {
                        case MONITOR -> owners[i].readMonitor(now, BURST);
                        case LIVE -> owners[i].readLive(now, BURST);
                        default -> owners[i].readReplay(now, BURST);
                    }
                }
            }
        }
        long now = System.nanoTime();
        for (int i = 0; i < sessions.size(); i++) {
            sessions.get(i).tick(now);
        }
    }

    /**
     * Polls, per engine, its live socket's monitor first (so a dropped connection is noticed before
     * the batches of the next one), then its live socket, then its replay socket.
     */
    private void rebuildPollItems() {
        List<ZMQ.PollItem> it = new ArrayList<>();
        List<EngineSession> own = new ArrayList<>();
        StringBuilder kind = new StringBuilder();
        for (EngineSession s : sessions) {
            ZMQ.Socket[] sockets = {s.monitorSocket(), s.liveSocket(), s.replaySocket()};
            for (int k = 0; k < sockets.length; k++) {
                if (sockets[k] != null) {
                    it.add(new ZMQ.PollItem(sockets[k], ZMQ.Poller.POLLIN));
                    own.add(s);
                    kind.append((char) k);
                }
            }
        }
        items = it.toArray(new ZMQ.PollItem[0]);
        owners = own.toArray(new EngineSession[0]);
        kinds = new byte[kind.length()];
        for (int i = 0; i < kinds.length; i++) {
            kinds[i] = (byte) kind.charAt(i);
        }
        socketsChanged = false;
    }

    private void shutdown() {
        for (EngineSession s : sessions) {
            try {
                s.closeSockets();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "closing sockets: " + e);
            }
        }
        sessions.clear();
        if (context != null) {
            context.close();
        }
        if (selector != null) {
            try {
                selector.close();
            } catch (java.io.IOException e) {
                LOG.log(Level.DEBUG, "closing the selector: " + e);
            }
        }
        finished = true;
        failLateCommands();
    }

    private static void pause() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
