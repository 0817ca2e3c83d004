/**
 * Stand-in vLLM engines for tests and the demo ({@code kvprefix standin}): one process serving N
 * independent engines, each with vLLM's OpenAI HTTP API, vLLM's ZMQ/msgpack KV events and a replay
 * socket, over the simulator's engine model ({@code io.kvprefix.simulator.Engine}) run in real time
 * on one thread per engine. Not a library: {@link io.kvprefix.standin.Standin} (start, the READY line,
 * {@code run} until SIGTERM or the end of standard input) and {@link io.kvprefix.standin.StandinSettings}
 * are what the command line and other modules' tests use. {@link io.kvprefix.standin.ChildProcess}
 * is how a parent starts such a child and stops it (by its process id), the one home of that for the
 * stand-in's test-jar ({@code StandinProcess}), the command line's live leg and its benchmarks.
 *
 * <p>Built from vLLM's own source ({@code vllm-project/vllm}), each file at the commit named:
 * {@code vllm/entrypoints/openai/completion/serving.py} @ {@code 030ea52e} and {@code protocol.py} @
 * {@code 002032ee}; {@code chat_completion/serving.py} @ {@code 006c49d4} and {@code protocol.py} @
 * {@code 002032ee}; {@code engine/serving.py} @ {@code 00bd1493} (errors, {@code _check_model});
 * {@code models/serving.py} @ {@code 00153c8b}; {@code vllm/entrypoints/serve/engine/protocol.py} @
 * {@code f1bf7bd0} (usage, errors, models); {@code serve/disagg/protocol.py} @ {@code 06408932} and
 * {@code serving.py} @ {@code 0001948b} ({@code /inference/v1/generate}); {@code serve/render/api_router.py}
 * @ {@code 1c608d64} and {@code serving.py} @ {@code 0001948b}; {@code serve/tokenize/protocol.py} @
 * {@code 030ea52e}; {@code serve/instrumentator/health.py} @ {@code 98b137c6};
 * {@code serve/cache/api_router.py} @ {@code 09cb327f}; {@code vllm/v1/metrics/loggers.py} @
 * {@code 005a810b}; {@code vllm/distributed/kv_events.py} @ {@code 0181ea31}. What each gives, the
 * bodies field for field, the SSE framing, the events and the replay protocol, and where the stand-in
 * differs from vLLM, are docs/STANDIN.md sections 1 to 5.
 */
package io.kvprefix.standin;
