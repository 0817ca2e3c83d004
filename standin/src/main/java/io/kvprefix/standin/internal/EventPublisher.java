package io.kvprefix.standin.internal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * One engine's KV-event publisher, as vLLM's {@code ZmqEventPublisher} works (the package comment
 * names the source): a PUB socket (send high-water mark 100,000) sends each batch as the frames
 * {@code [topic, seq (8 bytes big-endian), payload]}, sequence numbers counting from 0; the last
 * {@code bufferSteps} batches are kept; a ROUTER socket (ZMQ's default high-water mark, as vLLM leaves
 * it) answers a request {@code [identity, "", start_seq]} with every kept batch from {@code start_seq}
 * on as {@code [identity, "", seq, payload]}, then the end marker {@code [identity, "", -1 as 8 bytes,
 * ""]}, in one burst; a request of another shape is ignored. One thread owns both sockets and serves
 * replay requests between batches, as vLLM's publisher thread does.
 *
 * <p>Thread-safety: {@link #publish} may be called from any thread (batches go out in call order);
 * {@link #close} once.
 */
public final class EventPublisher implements AutoCloseable {
    /** vLLM's {@code END_SEQ}: -1 as 8 bytes. */
    static final byte[] END_SEQ = {-1, -1, -1, -1, -1, -1, -1, -1};

    private static final int PUB_HWM = 100_000;
    private static final List<WireEvent> STOP = List.of();

    private final EventEncoding encoding;
    private final byte[] topic;
    private final int bufferSteps;
    private final ZMQ.Socket pub;
    private final ZMQ.Socket replay;
    private final int pubPort;
    private final int replayPort;
    private final LinkedBlockingQueue<List<WireEvent>> queue = new LinkedBlockingQueue<>();
    private final ArrayDeque<Kept> buffer = new ArrayDeque<>();
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong queued = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    private record Kept(long seq, byte[] payload) {}

    /**
     * Binds both sockets on {@code host} ({@code port} 0: a free port) and starts the thread.
     *
     * @param bufferSteps batches kept for replay (vLLM's {@code buffer_steps}, default 10,000)
     */
    public EventPublisher(
            ZContext context,
            String host,
            int eventsPort,
            int replayPort,
            EventEncoding encoding,
            String topic,
            int bufferSteps,
            String name) {
        this.encoding = encoding;
        this.topic = topic.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.bufferSteps = bufferSteps;
        this.pub = context.createSocket(SocketType.PUB);
        pub.setSndHWM(PUB_HWM);
        pub.setLinger(0);
        this.pubPort = bind(pub, host, eventsPort);
        this.replay = context.createSocket(SocketType.ROUTER);
        replay.setLinger(0);
        this.replayPort = bind(replay, host, replayPort);
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static int bind(ZMQ.Socket s, String host, int port) {
        if (port != 0) {
            s.bind("tcp://" + host + ":" + port);
            return port;
        }
        s.bind("tcp://" + host + ":*"); // the system's choice of a free ephemeral port
        String endpoint = s.getLastEndpoint();
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    /** The PUB socket's port. */
    public int eventsPort() {
        return pubPort;
    }

    /** The replay ROUTER socket's port. */
    public int replayPort() {
        return replayPort;
    }

    /** Batches sent so far (the next batch's sequence number). */
    public long published() {
        return published.get();
    }

    /** Batches queued so far: once a batch is queued, its sequence number is below this. */
    public long queued() {
        return queued.get();
    }

    /** Queues one batch (nothing if {@code events} is empty). */
    public void publish(List<WireEvent> events) {
        if (!events.isEmpty() && running) {
            queued.incrementAndGet();
            queue.add(events);
        }
    }

    private void run() {
        try {
            while (true) {
                serveReplay();
                List<WireEvent> batch = queue.poll(10, TimeUnit.MILLISECONDS);
                if (batch == STOP) {
                    return;
                }
                if (batch != null) {
                    send(batch);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            pub.close();
            replay.close();
        }
    }

    private void send(List<WireEvent> batch) {
        long seq = published.get();
        byte[] payload = encoding.encode(System.currentTimeMillis() / 1000.0, batch, 0);
        pub.sendMore(topic);
        pub.sendMore(seqBytes(seq));
        pub.send(payload, 0);
        buffer.addLast(new Kept(seq, payload));
        if (buffer.size() > bufferSteps) {
            buffer.removeFirst();
        }
        published.set(seq + 1);
    }

    /** Answers every replay request waiting, as vLLM's {@code _service_replay}. */
    private void serveReplay() {
        while (true) {
            ZMsg request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT);
            if (request == null) {
                return;
            }
            if (request.size() != 3) {
                continue; // vLLM logs "Invalid replay request" and goes on
            }
            byte[] client = request.getFirst().getData();
            byte[] start = request.getLast().getData();
            for (Kept k : buffer) {
                if (atOrAfter(k.seq(), start)) {
                    replay.sendMore(client);
                    replay.sendMore(new byte[0]);
                    replay.sendMore(seqBytes(k.seq()));
                    replay.send(k.payload(), 0);
                }
            }
            replay.sendMore(client);
            replay.sendMore(new byte[0]);
            replay.sendMore(END_SEQ);
            replay.send(new byte[0], 0);
        }
    }

    /** Whether {@code seq} >= the unsigned big-endian number {@code start} (any length, as Python's {@code int.from_bytes}). */
    static boolean atOrAfter(long seq, byte[] start) {
        int lead = Math.max(0, start.length - 8);
        for (int i = 0; i < lead; i++) {
            if (start[i] != 0) {
                return false; // beyond every 64-bit sequence number
            }
        }
        long v = 0;
        for (int i = lead; i < start.length; i++) {
            v = (v << 8) | (start[i] & 0xff);
        }
        return Long.compareUnsigned(seq, v) >= 0;
    }

    static byte[] seqBytes(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    /** Sends what is queued, then stops the thread and closes the sockets. */
    @Override
    public void close() {
        running = false;
        queue.add(STOP);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
