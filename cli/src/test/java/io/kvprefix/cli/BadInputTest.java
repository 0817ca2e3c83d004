package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * Every command answers a bad argument or input with one line on standard error that names the
 * option or file and what is wrong, exit status 2, nothing on standard output and no stack trace.
 * Each row runs the real entry point ({@link Main#run}).
 *
 * <p><b>Adding a command or an option:</b> add rows to {@link #ROWS}: the arguments as one string
 * (split at spaces), then the fragments the message must contain. Placeholders stand for files made
 * once per run: {@code {missing}} (no such file), {@code {dir}} (a directory), {@code {empty}} (an
 * empty file), {@code {trace}} (a Mooncake trace of three lines), {@code {traceline}} (one line of it),
 * {@code {ops}} (a valid op stream), {@code {removes}} (an op stream that stores nothing), {@code {file}}
 * (a regular file where a directory is wanted). {@link #everyCommandHasARow} fails for a command
 * without one.
 */
class BadInputTest {
    /** One bad invocation and what its message must contain. */
    record Row(String args, List<String> fragments) {
        @Override
        public String toString() {
            return args;
        }
    }

    private static Row row(String args, String... fragments) {
        return new Row(args, List.of(fragments));
    }

    static final List<Row> ROWS = List.of(
            // the command line itself
            row("nosuchcommand", "Unmatched argument", "'nosuchcommand'", "--help lists the commands"),
            row("bench --nosuch", "Unknown option: '--nosuch'", "kvprefix bench --help"),
            // bench: the op stream, the numbers
            row("bench --ops {missing}", "--ops", "no such file"),
            row("bench --ops {dir}", "--ops", "is a directory"),
            row("bench --ops {empty}", "--ops", "the file is empty"),
            row("bench --ops {trace}", "--ops", "none of its 3 lines is an op-stream line", "--trace"),
            row("bench --ops {traceline}", "--ops", "its one line is not an op-stream line"),
            row("bench --ops {ops} --trace {trace}", "give --ops or --trace, not both"),
            row("bench --repeat abc", "--repeat", "'abc' is not an int"),
            row("bench --repeat 0", "--repeat must be >= 1, got 0"),
            row("bench --warmup -1", "--warmup must be >= 0, got -1"),
            row("bench --order random", "--order must be free or trace"),
            row("bench --latency-at abc", "--latency-at", "'abc' is not a number"),
            row("bench --latency-at 2", "--latency-at", "(0, 1]"),
            row("bench --sink", "--sink", "--readers 0"),
            row("bench --writers 0", "--writers must be in 1..1024, got 0"),
            row("bench --readers -1", "--readers must be in 0..1024, got -1"),
            row("bench --impl fast", "unknown implementation 'fast'"),
            row("bench --impl ,", "--impl names no implementation"),
            row("sweep --impl ,", "--impl names no implementation"),
            row("footprint --impl ,", "--impl names no implementation"),
            row("simulate --policies ,", "--policies names no policy"),
            row("bench --jump-size 0 --ops {ops}", "--jump-size"),
            row("bench --max-workers 0 --ops {ops}", "--max-workers"),
            row("bench --workers 0", "--workers must be in 1..65536, got 0"),
            row("bench --requests 2000000000", "--requests 2000000000 needs about", "GiB"),
            row("bench --ops {removes}", "nothing to time"),
            row("bench --workers 65536 --cache-blocks 2000000000", "--cache-blocks 2000000000 needs about", "GiB"),
            // sweep
            row("sweep --ops {empty}", "--ops", "the file is empty"),
            row("sweep --ops {trace}", "--ops", "none of its 3 lines"),
            row("sweep --from 0", "--from must be a finite number > 0, got 0"),
            row("sweep --from NaN", "--from must be a finite number > 0, got NaN"),
            row("sweep --from 10 --to 5", "--to must be >= --from"),
            row("sweep --steps-per-decade 0", "--steps-per-decade must be in 1..1000, got 0"),
            row("sweep --out {file}", "--out", "is a file, not a directory"),
            // simulate and demo
            row("simulate --requests 2000000000", "--requests 2000000000 needs about", "GiB"),
            row("simulate --requests 0", "--requests must be >= 1, got 0"),
            row("simulate --requests abc", "--requests", "'abc' is not an int"),
            row("simulate --trace {missing}", "--trace", "no such file"),
            row("simulate --trace {dir}", "--trace", "is a directory"),
            row("simulate --trace {empty}", "--trace", "the file is empty, no requests"),
            row("simulate --trace {ops}", "--trace", ":1:"),
            row("simulate --trace {trace} --requests 5", "--requests is for the built-in workload"),
            row("simulate --split 3", "--split must be a divisor of 512"),
            row("simulate --duplicate 0", "--duplicate must be >= 1, got 0"),
            row("simulate --truncate 0", "--truncate must be >= 1, got 0"),
            row("simulate --cache-blocks 0", "--cache-blocks must be >= 1, got 0"),
            row("simulate --policies nosuch", "--policies", "unknown policy 'nosuch'"),
            row("simulate --prefill-rate 0", "--prefill-rate must be a finite number > 0, got 0"),
            row("simulate --decode-rate -1", "--decode-rate must be a finite number > 0, got -1"),
            row("simulate --temperature -1", "--temperature must be a finite number >= 0"),
            row("simulate --predicted-ttl 0", "--predicted-ttl must be a positive number"),
            row("simulate --out {file}", "--out", "is a file, not a directory"),
            row("demo --requests 0", "--requests must be >= 1, got 0"),
            row("demo --requests 2000000000", "--requests 2000000000 needs about", "GiB"),
            row("demo --out {file}", "--out", "is a file, not a directory"),
            row("demo --live-requests 0 --out {dir}", "--live-requests must be >= 1, got 0"),
            // proxy-bench
            row("proxy-bench --rounds 0", "--rounds must be >= 1, got 0"),
            row("proxy-bench --engines 0", "--engines must be >= 1, got 0"),
            row("proxy-bench --requests 0", "--requests must be >= 1, got 0"),
            row("proxy-bench --concurrency 0", "--concurrency must be in 1..4096, got 0"),
            row("proxy-bench --concurrency x", "--concurrency", "x"),
            row("proxy-bench --open-streams 20000", "--open-streams must be in 1..10000, got 20000"),
            row("proxy-bench --wrk-seconds 0", "--wrk-seconds must be >= 1, got 0"),
            row("proxy-bench --out {file}", "--out", "is a file, not a directory"),
            row("proxy-bench --policy nope", "--policy", "unknown routing policy 'nope'"),
            // gen-ops
            row("gen-ops --out {missing}/x.jsonl", "--out", "no such directory"),
            row("gen-ops --out {dir}", "--out", "is a directory, not a file"),
            row("gen-ops --engine-hashes other", "--engine-hashes must be mock or dynamo"),
            row("gen-ops --trace {missing}", "--trace", "no such file"),
            // replay
            row("replay {missing}", "cannot read", "no such file"),
            row("replay {dir}", "cannot read", "directory"),
            row("replay --impl fast {ops}", "unknown implementation 'fast'"),
            row("replay --max-line-bytes 0 {ops}", "--max-line-bytes"),
            row("replay --memory-budget lots {ops}", "--memory-budget"),
            // listen
            row("listen", "--engine"),
            row("listen --engine nonsense", "--engine"),
            row("listen --engine tcp://127.0.0.1:1=1 --duration 0", "--duration must be a positive number"),
            row("listen --engine tcp://127.0.0.1:1=1 --queries {missing}", "--queries", "no such file"),
            row("listen --engine tcp://127.0.0.1:1=1 --queries {dir}", "--queries", "is a directory"),
            row("listen --engine tcp://127.0.0.1:1=1 --metrics-port 70000", "--metrics-port must be 0..65535"),
            row("listen --trtllm-events {missing}=1", "--trtllm-events", "no such file"),
            row("listen --engine-url http://127.0.0.1:1=x", "--engine-url", "is not an unsigned 64-bit integer"),
            row("listen --engine-url tcp://127.0.0.1:1=1", "--engine-url", "expected http://HOST:PORT=WORKER"),
            row("listen --engine-url http://127.0.0.1:1=1,format=nope", "--engine-url", "unknown option 'format=nope'"),
            row("listen --engines-file {missing}", "--engines-file", "no such file"),
            // listen --engine ...,snapshot= (vLLM PR #57789's snapshot endpoint, docs/LISTENER.md section 8)
            row("listen --engine tcp://127.0.0.1:1=1,snapshot=", "--engine", "snapshot= needs an endpoint"),
            row("listen --engine tcp://127.0.0.1:1=1,snapshot=nonsense", "--engine", "snapshot endpoint 'nonsense'"),
            row("listen --engine tcp://127.0.0.1:1=1,snapshot=tcp://*:2", "--engine", "is what the engine binds"),
            row(
                    "listen --engine tcp://127.0.0.1:1=1,replay=tcp://127.0.0.1:2,snapshot=tcp://127.0.0.1:3",
                    "--engine",
                    "replay= and snapshot= exclude each other"),
            row("listen --trtllm-events {dir}=1", "--trtllm-events", "is a directory"),
            row("listen --trtllm-events x", "--trtllm-events", "is not FILE|-=WORKER"),
            row("hash --block-size 4 --tokens 1,2,3,4 --mm abc", "--mm", "is not START:END:MM_HASH"),
            row(
                    "listen --engine tcp://127.0.0.1:1=1 --metrics-port 0 --metrics-host no.such.host.invalid",
                    "--metrics-host"),
            // listen --nats (a replica), relay, fleet-bench
            row("listen --nats nats://127.0.0.1:1 --engine tcp://127.0.0.1:1=1", "--engine", "exclude --nats"),
            row("listen --nats nats://127.0.0.1:1 --metrics-port 70000", "--metrics-port must be 0..65535"),
            row("listen --nats nats://127.0.0.1:1 --queries {missing}", "--queries", "no such file"),
            row("listen --nats nats://127.0.0.1:1 --impl fast", "unknown implementation 'fast'"),
            // listen --dynamo (a Dynamo deployment's events; checked before anything connects)
            row("listen --dynamo nats://127.0.0.1:1", "--dynamo needs --namespace NS and --component C"),
            row("listen --namespace dynamo --component backend", "go with --dynamo URL"),
            row(
                    "listen --dynamo nats://127.0.0.1:1 --namespace d --component b --metrics-port 70000",
                    "--metrics-port must be 0..65535"),
            row(
                    "listen --dynamo nats://127.0.0.1:1 --namespace d --component b --dynamo-mode fast",
                    "--dynamo-mode must be durable or event-plane, not 'fast'"),
            row(
                    "listen --dynamo nats://127.0.0.1:1 --namespace d --component b --stream S",
                    "--stream names the JetStream stream of --dynamo-mode durable"),
            row(
                    "listen --dynamo nats://127.0.0.1:1 --namespace d --component b --engine tcp://127.0.0.1:1=1",
                    "exclude --dynamo"),
            row("listen --dynamo nats://127.0.0.1:1 --namespace d --component b --duration 0", "--duration"),
            row("relay --nats nats://127.0.0.1:1", "Missing required option", "--engine"),
            row("relay --engine tcp://127.0.0.1:1=1", "Missing required option", "--nats"),
            row("relay --nats nats://127.0.0.1:1 --engine nonsense", "--engine"),
            row(
                    "relay --nats nats://127.0.0.1:1 --engine tcp://127.0.0.1:1=1,snapshot=tcp://127.0.0.1:2",
                    "--engine",
                    "snapshot= is read by listen, not by a relay"),
            row(
                    "relay --nats nats://127.0.0.1:1 --engine tcp://127.0.0.1:1=1 --engine tcp://127.0.0.1:1=2",
                    "--engine",
                    "is given twice"),
            row(
                    "relay --nats nats://127.0.0.1:1 --engine tcp://127.0.0.1:1=1 --retention 0",
                    "--retention must be a positive number"),
            row(
                    "relay --nats nats://127.0.0.1:1 --engine tcp://127.0.0.1:1=1 --metrics-port 70000",
                    "--metrics-port must be 0..65535"),
            row(
                    "relay --nats nats://127.0.0.1:1 --engine tcp://127.0.0.1:1=1 --metrics-port 0"
                            + " --metrics-host no.such.host.invalid",
                    "--metrics-host"),
            row("fleet-bench --engines 0", "--engines", "must be at least 1"),
            // snapshots: replay --restore, listen --snapshot
            row("replay --restore {missing} {ops}", "snapshot", "cannot read: no such file or directory"),
            row("replay --restore {dir} {ops}", "snapshot", "is a directory"),
            row("replay --restore {ops} {ops}", "snapshot", "not a kvprefix snapshot (bad magic)"),
            row("listen --engine tcp://127.0.0.1:5557=1 --snapshot-interval 5", "--snapshot-interval needs --snapshot"),
            row("listen --nats nats://127.0.0.1:1 --snapshot {file}", "--snapshot is for engines read directly"),
            row("listen --ready-with-absent-engines", "give at least one --engine"),
            row("listen --engine tcp://127.0.0.1:5557=1 --snapshot {dir}", "--snapshot", "is a directory, not a file"),
            row(
                    "listen --engine tcp://127.0.0.1:5557=1 --snapshot {missing}/x.snap",
                    "--snapshot",
                    "no such directory"),
            // serve (the engines named here are not there: every row is refused before anything is started)
            row("serve", "give at least one --engine"),
            row("serve --ready-with-absent-engines", "give at least one --engine"),
            row("serve --engine nonsense", "--engine", "expected WORKER[/RANK]=http://HOST:PORT"),
            row("serve --engine 1=https://127.0.0.1:1", "--engine", "must start with http://"),
            row(
                    "serve --engine 1=http://127.0.0.1:1,events=tcp://*:5557",
                    "--engine",
                    "not a ZMQ endpoint to connect to"),
            row("serve --engine 1=http://127.0.0.1:1 --engine 1=http://127.0.0.1:2", "worker 1/0 is given twice"),
            row("serve --engine 1=http://127.0.0.1:1 --policy nosuch", "--policy", "unknown routing policy 'nosuch'"),
            row(
                    "serve --engine 1=http://127.0.0.1:1 --policy round-robin --inflight-prefills",
                    "--inflight-prefills",
                    "not to round-robin"),
            row("serve --engine 1=http://127.0.0.1:1 --port 70000", "--port must be 0..65535"),
            row("serve --engine 1=http://127.0.0.1:1 --metrics-port 70000", "--metrics-port must be 0..65535"),
            row("serve --engine 1=http://127.0.0.1:1 --block-size 0", "--block-size must be >= 1, got 0"),
            row("serve --engine 1=http://127.0.0.1:1 --max-body 0", "--max-body must be >= 1 byte"),
            row("serve --engine 1=http://127.0.0.1:1 --max-body lots", "--max-body"),
            row("serve --engine 1=http://127.0.0.1:1 --max-in-flight 0", "--max-in-flight must be >= 1, got 0"),
            row("serve --engine 1=http://127.0.0.1:1 --max-queued -1", "--max-queued must be >= 0, got -1"),
            row("serve --engine 1=http://127.0.0.1:1 --queue-timeout 0", "--queue-timeout must be a positive number"),
            row("serve --engine 1=http://127.0.0.1:1 --idle-timeout -1", "--idle-timeout must be a positive number"),
            row("serve --engine 1=http://127.0.0.1:1 --event-loops 0", "--event-loops must be 1..256, got 0"),
            row("serve --engine 1=http://127.0.0.1:1 --duration 0", "--duration must be a positive number"),
            row("serve --engine 1=http://127.0.0.1:1 --tokenizer m", "--tokenizer 'm'", "expected MODEL=SPEC"),
            row("serve --engine 1=http://127.0.0.1:1 --tokenizer m=nosuch", "--tokenizer 'm=nosuch'", "is none of"),
            row(
                    "serve --engine 1=http://127.0.0.1:1 --tokenizer m=tokens --tokenizer m=tokens",
                    "--tokenizer: model 'm' is given two tokenizers"),
            row(
                    "serve --engine 1=http://127.0.0.1:1,events=tcp://127.0.0.1:2 --nats nats://127.0.0.1:1",
                    "--engine",
                    "--nats exclude each other"),
            row("serve --engine 1=http://127.0.0.1:1 --nats nats://127.0.0.1:1 --snapshot {file}", "--snapshot"),
            row("serve --engine 1=http://127.0.0.1:1 --nats", "Missing required parameter", "--nats"),
            row("serve --engine 1=http://127.0.0.1:1 --dynamo nats://127.0.0.1:1", "--dynamo needs --namespace"),
            row("serve --engine 1=http://127.0.0.1:1 --component backend", "go with --dynamo URL"),
            row(
                    "serve --engine 1=http://127.0.0.1:1 --dynamo nats://127.0.0.1:1 --namespace d --component b"
                            + " --dynamo-mode x",
                    "--dynamo-mode must be durable or event-plane"),
            row(
                    "serve --engine 1=http://127.0.0.1:1,events=tcp://127.0.0.1:2 --dynamo nats://127.0.0.1:1"
                            + " --namespace d --component b",
                    "events= and --dynamo exclude each other"),
            // epp (the engines named here are not there: every row is refused before anything is started)
            row("epp", "give at least one --engine WORKER=IP:PORT"),
            row("epp --ready-with-absent-engines", "give at least one --engine WORKER=IP:PORT"),
            row("epp --engine nonsense", "--engine", "expected WORKER[/RANK]=http://HOST:PORT"),
            row("epp --engine 1=127.0.0.1:1 --engine 1=127.0.0.1:2", "worker 1/0 is given twice"),
            row("epp --engine 1=127.0.0.1:1 --port 70000", "--port must be 0..65535"),
            row("epp --engine 1=127.0.0.1:1 --health-port -1", "--health-port must be 0..65535"),
            row("epp --engine 1=127.0.0.1:1 --metrics-port 70000", "--metrics-port must be 0..65535"),
            row("epp --engine 1=127.0.0.1:1 --fallbacks -1", "--fallbacks must be >= 0, got -1"),
            row("epp --engine 1=127.0.0.1:1 --policy nosuch", "--policy", "unknown routing policy 'nosuch'"),
            row(
                    "epp --engine 1=127.0.0.1:1 --policy llm-d-scorers --inflight-prefills",
                    "--inflight-prefills",
                    "not to llm-d-scorers"),
            row("epp --engine 1=127.0.0.1:1 --block-size 0", "--block-size must be >= 1, got 0"),
            row("epp --engine 1=127.0.0.1:1 --tokenizer m", "--tokenizer 'm'", "expected MODEL=SPEC"),
            row("epp --engine 1=127.0.0.1:1 --duration 0", "--duration must be a positive number"),
            row("epp --engine 1=127.0.0.1:1 --max-queued -1", "--max-queued must be >= 0, got -1"),
            // epp --dynamo (the same source as serve's and listen's; checked before anything connects)
            row("epp --engine 1=127.0.0.1:1 --dynamo nats://127.0.0.1:1", "--dynamo needs --namespace NS"),
            row("epp --engine 1=127.0.0.1:1 --namespace dynamo", "go with --dynamo URL"),
            row(
                    "epp --engine 1=127.0.0.1:1 --dynamo nats://127.0.0.1:1 --namespace d --component b"
                            + " --dynamo-mode x",
                    "--dynamo-mode must be durable or event-plane, not 'x'"),
            row(
                    "epp --engine 1=127.0.0.1:1 --dynamo nats://127.0.0.1:1 --namespace d --component b --stream S",
                    "--stream names the JetStream stream of --dynamo-mode durable"),
            row(
                    "epp --engine 1=127.0.0.1:1 --nats nats://127.0.0.1:1 --dynamo nats://127.0.0.1:1"
                            + " --namespace d --component b",
                    "--nats and --dynamo exclude each other"),
            row(
                    "epp --engine 1=127.0.0.1:1,events=tcp://127.0.0.1:2 --dynamo nats://127.0.0.1:1"
                            + " --namespace d --component b",
                    "events= and --dynamo exclude each other"),
            // epp-bench (refused before anything is started)
            row("epp-bench --tokens 8", "--tokens must be >= 16, got 8"),
            row("epp-bench --concurrency 0", "--concurrency must be in 1..4096, got 0"),
            row("epp-bench --requests 0", "--requests must be >= 1, got 0"),
            row("epp-bench --engines 0", "--engines must be in 1..64, got 0"),
            row("epp-bench --chunk-checks -1", "--chunk-checks must be >= 0, got -1"),
            row("epp-bench --policy nosuch", "--policy", "unknown routing policy 'nosuch'"),
            // snapshot-bench
            row("snapshot-bench --repeat 0", "--repeat must be >= 1, got 0"),
            row("snapshot-bench --blocks 0", "--blocks must be >= 1, got 0"),
            row("snapshot-bench --chain 5000", "--chain must be in 1..4096, got 5000"),
            row("snapshot-bench --impl fast", "--impl", "unknown implementation 'fast'"),
            row("snapshot-bench --dir {file}", "--dir", "is a file, not a directory"),
            row("snapshot-bench --ops {missing}", "--ops", "no such file"),
            row("snapshot-bench --ops {trace}", "--ops", "none of its 3 lines is an op-stream line"),
            row("snapshot-bench --write-ops {dir}", "--write-ops", "is a directory, not a file"),
            row("snapshot-bench --blocks 2000000000", "--blocks 2000000000 (--impl offheap) needs about", "GiB"),
            row("fleet-bench --nats-server {missing}", "--nats-server", "no such file"),
            row("fleet-bench --nats-server {file}", "--nats-server", "not executable"),
            // tokenize
            row("tokenize {trace}", "--tokenizer"),
            row("tokenize --tokenizer {missing} {ops}", "--tokenizer", "tokenizer.json: no such file"),
            row("tokenize --tokenizer {dir} {ops}", "--tokenizer", "tokenizer.json: no such file"),
            row("tokenize --tokenizer render:localhost {ops}", "--tokenizer", "is not http://HOST:PORT"),
            row("tokenize --tokenizer tokens {missing}", "no such file"),
            row("tokenize --tokenizer tokens {dir}", "is a directory"),
            row("tokenize --tokenizer tokens {traceline}", "line 1", "neither a chat body"),
            row("tokenize --tokenizer tokens {file}", "line 1", "not one JSON object"),
            row("tokenize --tokenizer tokens --hash {ops}", "--hash needs --block-size"),
            row("tokenize --tokenizer tokens --block-size 4 {ops}", "--block-size is for --hash"),
            row("tokenize --tokenizer tokens --hash --block-size 0 {ops}", "--block-size must be >= 1, got 0"),
            // hash
            row("hash --block-size 0 --tokens 1", "--block-size must be >= 1, got 0"),
            row("hash --block-size 2 --tokens a,b", "--tokens", "is not an integer"),
            row("hash --block-size 2 --tokens 1 --seed x", "--seed"),
            // footprint
            row("footprint --chain 0", "--chain must be >= 1, got 0"),
            row("footprint --blocks -1", "--blocks must be >= 1, got -1"),
            row("footprint --blocks abc", "--blocks", "'abc' is not an int"),
            row("footprint --workers 0", "--workers must be in 1..65536, got 0"),
            row("footprint --sharing 3 --workers 2", "--sharing must be in 1..2, got 3"),
            row("footprint --impl fast", "unknown implementation 'fast'"),
            row(
                    "footprint --blocks 100000000 --impl heap",
                    "--blocks 100000000",
                    "GiB of Java heap",
                    "KVPREFIX_JAVA_OPTS=-Xmx"),
            row("footprint --ops {missing}", "--ops", "no such file"),
            row("footprint --ops {trace}", "--ops", "none of its 3 lines"),
            row("footprint --ops {removes}", "--ops", "leave no stored block"),
            // standin
            row("standin --engines 0", "--engines must be in 1..4096, got 0"),
            row("standin --engines abc", "--engines", "'abc' is not an int"),
            row("standin --worker-id -1", "--worker-id must be >= 0, got -1"),
            row("standin --port 70000", "--port must be 0..65535"),
            row("standin --events-port -2", "--events-port must be 0..65535"),
            row("standin --replay-port 65536", "--replay-port must be 0..65535"),
            row("standin --block-size 0", "--block-size must be in 1..65536, got 0"),
            row("standin --cache-blocks 0", "--cache-blocks must be in 1..268435456, got 0"),
            row("standin --max-model-len 1", "--max-model-len must be >= 2, got 1"),
            row("standin --time-scale 0", "--time-scale must be a finite number > 0, got 0"),
            row("standin --time-scale NaN", "--time-scale must be a finite number > 0, got NaN"),
            row("standin --prefill-us-per-token -1", "--prefill-us-per-token must be a finite number > 0"),
            row("standin --decode-us-per-token 0", "--decode-us-per-token must be a finite number > 0"),
            row("standin --event-encoding json", "--event-encoding must be map or array, got 'json'"),
            row("standin --replay-buffer 0", "--replay-buffer must be in 1..100000000, got 0"),
            row("standin --max-num-seqs 0", "--max-num-seqs must be in 1..1048576, got 0"),
            row("standin --max-num-batched-tokens 0", "--max-num-batched-tokens must be >= 1, got 0"),
            row("standin --model  --seed 1", "--model must be a non-empty name"),
            row("standin --tokenizer {missing}", "--tokenizer", "no such directory"),
            row("standin --tokenizer {file}", "--tokenizer", "is a file, not a directory"),
            row("standin --seed x", "--seed", "'x' is not a long"),
            row("standin --host no.such.host.invalid", "--host"),
            // jmh (its own option syntax)
            row("jmh -nosuchoption", "JMH", "not a recognized option", "jmh -h"),
            row("jmh -f abc", "JMH", "'abc'"),
            row("jmh NoSuchBenchmarkAnywhere", "no benchmark matches", "jmh -l"));

    @TempDir
    static Path tmp;

    private static Map<String, String> files;

    @BeforeAll
    static void files() throws IOException {
        Path empty = Files.createFile(tmp.resolve("empty.jsonl"));
        Path file = Files.writeString(tmp.resolve("file.txt"), "not a directory\n");
        Path ops = Files.writeString(tmp.resolve("ops.jsonl"), "{\"op\":\"match\",\"local_hashes\":[1]}\n");
        Path removes = Files.writeString(
                tmp.resolve("removes.jsonl"), "{\"op\":\"removed\",\"worker\":1,\"block_hashes\":[]}\n");
        Path trace = Files.writeString(tmp.resolve("trace.jsonl"), """
                {"timestamp": 0, "input_length": 1024, "output_length": 10, "hash_ids": [0, 1]}
                {"timestamp": 5, "input_length": 1100, "output_length": 10, "hash_ids": [0, 1, 2]}
                {"timestamp": 9, "input_length": 600, "output_length": 10, "hash_ids": [3, 4]}
                """); // three lines: the rows above count them
        Path dir = Files.createDirectory(tmp.resolve("a-directory"));
        Path oneLine = Files.writeString(
                tmp.resolve("one.jsonl"), Files.readAllLines(trace).get(0) + "\n");
        files = Map.of(
                "{missing}", tmp.resolve("no-such-file.jsonl").toString(),
                "{dir}", dir.toString(),
                "{empty}", empty.toString(),
                "{file}", file.toString(),
                "{ops}", ops.toString(),
                "{removes}", removes.toString(),
                "{trace}", trace.toString(),
                "{traceline}", oneLine.toString());
    }

    static Stream<Row> rows() {
        return ROWS.stream();
    }

    private static String[] args(Row row) {
        return Arrays.stream(row.args().split(" "))
                .map(a -> {
                    for (var f : files.entrySet()) {
                        a = a.replace(f.getKey(), f.getValue());
                    }
                    return a;
                })
                .toArray(String[]::new);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void oneLineExitTwoNoStackTrace(Row row) {
        // A bad input is refused at once; a row that runs the command for real fails here instead of hanging.
        var r = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> CliRunner.run(args(row)), row.args());
        String what = row.args() + " -> exit " + r.exit() + ", stderr:\n" + r.err();
        assertEquals(2, r.exit(), what);
        assertEquals("", r.out(), "nothing on standard output: " + what);
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line: " + what);
        String command = row.args().startsWith("nosuch")
                ? "kvprefix: "
                : "kvprefix " + row.args().split(" ")[0] + ": ";
        assertTrue(lines.get(0).startsWith(command), what);
        for (String f : row.fragments()) {
            assertTrue(lines.get(0).contains(f), "should say '" + f + "': " + what);
        }
        for (String leak : List.of("Exception", "\tat ", "java.", "NaN", "Infinity", "For input string")) {
            boolean expected = row.fragments().stream().anyMatch(f -> f.contains(leak));
            assertFalse(lines.get(0).contains(leak) && !expected, "no internals (" + leak + "): " + what);
        }
    }

    @Test
    void everyCommandHasARow() {
        Set<String> missing =
                new TreeSet<>(new CommandLine(new Main()).getSubcommands().keySet());
        for (Row r : ROWS) {
            missing.remove(r.args().split(" ")[0]);
        }
        assertEquals(Set.of(), missing, "commands without a row in BadInputTest.ROWS: add their bad inputs");
    }

    @Test
    void debugShowsTheStackTrace() {
        for (String[] args : List.of(
                new String[] {"footprint", "--chain", "0", "--debug"},
                new String[] {"--debug", "footprint", "--chain", "0"})) {
            var r = CliRunner.run(args);
            assertEquals(2, r.exit(), r.err());
            assertTrue(r.err().contains("\tat io.kvprefix.cli."), "a stack trace: " + r.err());
            List<String> lines = new ArrayList<>(r.err().lines().toList());
            assertEquals("kvprefix footprint: --chain must be >= 1, got 0", lines.get(lines.size() - 1), r.err());
        }
    }
}
