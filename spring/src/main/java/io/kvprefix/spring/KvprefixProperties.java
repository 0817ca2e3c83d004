package io.kvprefix.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code kvprefix.*} properties the starter builds its router service from (docs/SPRING.md section
 * 1). Each one is an option of {@code kvprefix serve} (docs/SERVE.md) under the same name, with the
 * same default; only {@code kvprefix.engines} is required.
 *
 * <p>Thread-safety: not thread-safe; Spring binds it once at start, and the starter reads it then.
 */
@ConfigurationProperties("kvprefix")
public class KvprefixProperties {
    private List<String> engines = new ArrayList<>();
    private final Nats nats = new Nats();
    private String policy;
    private boolean inflightPrefills;
    private Map<String, String> tokenizers = new LinkedHashMap<>();
    private int blockSize = 16;
    private Long memoryBudget;
    private Path snapshot;
    private Duration snapshotInterval = Duration.ofSeconds(60);
    private Integer maxInFlight;
    private Integer maxQueued;
    private Duration queueTimeout;
    private Duration healthInterval;
    private Duration healthTimeout;
    private Long maxBody;

    /** The engines, each {@code WORKER[/RANK]=http://HOST:PORT[,events=ENDPOINT][,replay=ENDPOINT]} as serve's {@code --engine}. */
    public List<String> getEngines() {
        return engines;
    }

    /** Sets the engines. */
    public void setEngines(List<String> engines) {
        this.engines = engines;
    }

    /** The fleet stream the engines' events come from instead of their sockets. */
    public Nats getNats() {
        return nats;
    }

    /** The routing policy's name, or null for the default ({@code dynamo-cost}). */
    public String getPolicy() {
        return policy;
    }

    /** Sets the routing policy's name. */
    public void setPolicy(String policy) {
        this.policy = policy;
    }

    /** Whether the routers count in-flight prefills (docs/SPEC.md section 6.7; default false). */
    public boolean isInflightPrefills() {
        return inflightPrefills;
    }

    /** Sets whether the routers count in-flight prefills. */
    public void setInflightPrefills(boolean on) {
        this.inflightPrefills = on;
    }

    /** Each model's tokenizer spec ({@code local:DIR}, {@code render:http://HOST:PORT} or {@code tokens}). */
    public Map<String, String> getTokenizers() {
        return tokenizers;
    }

    /** Sets the tokenizers by model. */
    public void setTokenizers(Map<String, String> tokenizers) {
        this.tokenizers = tokenizers;
    }

    /** Tokens per KV block, as the engines use. */
    public int getBlockSize() {
        return blockSize;
    }

    /** Sets the block size. */
    public void setBlockSize(int blockSize) {
        this.blockSize = blockSize;
    }

    /** The index's off-heap memory budget in bytes, or null for unlimited. */
    public Long getMemoryBudget() {
        return memoryBudget;
    }

    /** Sets the memory budget in bytes. */
    public void setMemoryBudget(Long memoryBudget) {
        this.memoryBudget = memoryBudget;
    }

    /** The snapshot file the index is restored from at start and saved to, or null. */
    public Path getSnapshot() {
        return snapshot;
    }

    /** Sets the snapshot file. */
    public void setSnapshot(Path snapshot) {
        this.snapshot = snapshot;
    }

    /** Time between snapshot saves. */
    public Duration getSnapshotInterval() {
        return snapshotInterval;
    }

    /** Sets the time between snapshot saves. */
    public void setSnapshotInterval(Duration snapshotInterval) {
        this.snapshotInterval = snapshotInterval;
    }

    /** Requests routed and proxied at once, or null for serve's default. */
    public Integer getMaxInFlight() {
        return maxInFlight;
    }

    /** Sets the requests in flight at once. */
    public void setMaxInFlight(Integer maxInFlight) {
        this.maxInFlight = maxInFlight;
    }

    /** Requests that may wait for a slot, or null for serve's default. */
    public Integer getMaxQueued() {
        return maxQueued;
    }

    /** Sets the requests that may wait. */
    public void setMaxQueued(Integer maxQueued) {
        this.maxQueued = maxQueued;
    }

    /** How long a request may wait for a slot, or null for serve's default. */
    public Duration getQueueTimeout() {
        return queueTimeout;
    }

    /** Sets the queue timeout. */
    public void setQueueTimeout(Duration queueTimeout) {
        this.queueTimeout = queueTimeout;
    }

    /** Time between health-check rounds, or null for serve's default. */
    public Duration getHealthInterval() {
        return healthInterval;
    }

    /** Sets the health-check interval. */
    public void setHealthInterval(Duration healthInterval) {
        this.healthInterval = healthInterval;
    }

    /** How long one health check may take, or null for serve's default. */
    public Duration getHealthTimeout() {
        return healthTimeout;
    }

    /** Sets the health-check timeout. */
    public void setHealthTimeout(Duration healthTimeout) {
        this.healthTimeout = healthTimeout;
    }

    /** The largest request body in bytes, or null for serve's default. */
    public Long getMaxBody() {
        return maxBody;
    }

    /** Sets the largest request body in bytes. */
    public void setMaxBody(Long maxBody) {
        this.maxBody = maxBody;
    }

    /**
     * The fleet stream ({@code kvprefix.nats.url}, {@code kvprefix.nats.stream}; docs/FLEET.md).
     *
     * <p>Thread-safety: not thread-safe, as its parent.
     */
    public static class Nats {
        private String url;
        private String stream = "KVPREFIX_EVENTS";

        /** The NATS server's URL, or null: the engines' own sockets. */
        public String getUrl() {
            return url;
        }

        /** Sets the NATS server's URL. */
        public void setUrl(String url) {
            this.url = url;
        }

        /** The stream's name. */
        public String getStream() {
            return stream;
        }

        /** Sets the stream's name. */
        public void setStream(String stream) {
            this.stream = stream;
        }
    }
}
