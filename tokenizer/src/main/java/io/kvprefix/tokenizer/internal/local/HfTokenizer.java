package io.kvprefix.tokenizer.internal.local;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * HuggingFace's tokenizers (Rust) through DJL's JNI binding, loaded from a {@code tokenizer.json} path
 * only (DJL's model-id form downloads from the Hub), with truncation and padding off, and DJL's
 * usage ping and downloads switched off before its first use (docs/TOKENIZER.md section 3.1):
 * DJL's {@code Ec2Utils.callHome} returns at once when {@code OPT_OUT_TRACKING} is true or when
 * {@code Utils.isOfflineMode()} (system property {@code ai.djl.offline}) is, and offline mode also
 * stops its native-library loader from downloading (it copies the bundled library from the jar).
 *
 * <p>Thread-safety: thread-safe; the Rust tokenizer's encode takes a shared reference, and a read lock
 * keeps {@link #close()} (the write lock) from freeing the native tokenizer under a running encode.
 */
public final class HfTokenizer implements AutoCloseable {
    static {
        quietDjl();
    }

    private final HuggingFaceTokenizer tokenizer;
    private final long handle;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private boolean closed;

    private HfTokenizer(HuggingFaceTokenizer tokenizer) {
        this.tokenizer = tokenizer;
        this.handle = tokenizer.getHandle();
    }

    /**
     * Sets DJL's switches unless the embedder set them: {@code OPT_OUT_TRACKING=true} (no usage ping)
     * and {@code ai.djl.offline=true} (nothing fetched from the network).
     */
    public static void quietDjl() {
        if (System.getenv("OPT_OUT_TRACKING") == null && System.getProperty("OPT_OUT_TRACKING") == null) {
            System.setProperty("OPT_OUT_TRACKING", "true");
        }
        if (System.getenv("DJL_OFFLINE") == null && System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
    }

    /** Loads {@code tokenizer.json}. */
    public static HfTokenizer load(Path tokenizerJson) {
        try {
            return new HfTokenizer(HuggingFaceTokenizer.newInstance(
                    tokenizerJson, Map.of("truncation", "false", "padding", "false", "addSpecialTokens", "false")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    tokenizerJson + ": HuggingFace tokenizers cannot load it: " + e.getMessage(), e);
        }
    }

    /** The ids of {@code text}, with the post-processor's special tokens (a BOS) when {@code addSpecialTokens}. */
    public int[] encode(String text, boolean addSpecialTokens) {
        lock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("the tokenizer is closed");
            }
            long encoding = TokenizersLibrary.LIB.encode(handle, text, addSpecialTokens);
            try {
                long[] ids = TokenizersLibrary.LIB.getTokenIds(encoding);
                int[] out = new int[ids.length];
                for (int i = 0; i < ids.length; i++) {
                    out[i] = Math.toIntExact(ids[i]);
                }
                return out;
            } finally {
                TokenizersLibrary.LIB.deleteEncoding(encoding);
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                tokenizer.close();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }
}
