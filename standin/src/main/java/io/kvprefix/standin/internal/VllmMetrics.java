package io.kvprefix.standin.internal;

/**
 * {@code GET /metrics} in vLLM's Prometheus names and help texts ({@code vllm/v1/metrics/loggers.py},
 * see the package comment) for what the engine model has: requests running and waiting, KV-cache
 * usage, prefix-cache queries and hits (tokens), prompt and generation tokens, finished requests.
 * Labels as vLLM sets them ({@code model_name}, {@code engine}, written sorted as
 * {@code prometheus_client} writes them); counters carry {@code _total} and a {@code _created} gauge,
 * as {@code prometheus_client}'s text format 0.0.4 exposes a counter.
 *
 * <p>Thread-safety: stateless.
 */
public final class VllmMetrics {
    /** {@code prometheus_client}'s {@code CONTENT_TYPE_LATEST} for text format 0.0.4. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private VllmMetrics() {}

    /** The exposition of {@code s} for the model {@code model}, counters created at {@code created} (epoch seconds). */
    public static String text(Generation.EngineStats s, String model, long created) {
        String labels = "{engine=\"0\",model_name=\"" + escape(model) + "\"}";
        StringBuilder b = new StringBuilder(2048);
        gauge(b, "vllm:num_requests_running", "Number of requests in model execution batches.", labels, s.running());
        gauge(b, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels, s.waiting());
        gauge(b, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels, s.kvCacheUsage());
        counter(
                b,
                "vllm:prefix_cache_queries",
                "Prefix cache queries, in terms of number of queried tokens.",
                labels,
                s.prefixQueries(),
                created);
        counter(
                b,
                "vllm:prefix_cache_hits",
                "Prefix cache hits, in terms of number of cached tokens.",
                labels,
                s.prefixHits(),
                created);
        counter(b, "vllm:prompt_tokens", "Number of prefill tokens processed.", labels, s.promptTokens(), created);
        counter(
                b,
                "vllm:generation_tokens",
                "Number of generation tokens processed.",
                labels,
                s.generationTokens(),
                created);
        String help = "Count of successfully processed requests.";
        b.append("# HELP vllm:request_success_total ").append(help).append('\n');
        b.append("# TYPE vllm:request_success_total counter\n");
        for (String reason : new String[] {"stop", "length", "abort"}) {
            long v = reason.equals("length") ? s.finished() : reason.equals("abort") ? s.aborted() : 0;
            b.append("vllm:request_success_total")
                    .append(reasonLabels(model, reason))
                    .append(' ')
                    .append(number(v))
                    .append('\n');
        }
        return b.toString();
    }

    private static String reasonLabels(String model, String reason) {
        return "{engine=\"0\",finished_reason=\"" + reason + "\",model_name=\"" + escape(model) + "\"}";
    }

    private static void gauge(StringBuilder b, String name, String help, String labels, double v) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(" gauge\n");
        b.append(name).append(labels).append(' ').append(number(v)).append('\n');
    }

    private static void counter(StringBuilder b, String name, String help, String labels, double v, long created) {
        b.append("# HELP ").append(name).append("_total ").append(help).append('\n');
        b.append("# TYPE ").append(name).append("_total counter\n");
        b.append(name)
                .append("_total")
                .append(labels)
                .append(' ')
                .append(number(v))
                .append('\n');
        b.append("# HELP ").append(name).append("_created ").append(help).append('\n');
        b.append("# TYPE ").append(name).append("_created gauge\n");
        b.append(name)
                .append("_created")
                .append(labels)
                .append(' ')
                .append(number(created))
                .append('\n');
    }

    /** A float as Python's {@code repr} writes it for the values here ({@code 3.0}, {@code 0.25}). */
    static String number(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e16) {
            return (long) v + ".0";
        }
        return Double.toString(v);
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
