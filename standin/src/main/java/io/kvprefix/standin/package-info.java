/**
 * Stand-in vLLM engines for tests and the demo ({@code kvprefix standin}): one process serving N
 * independent engines, each with vLLM's OpenAI HTTP API, vLLM's ZMQ/msgpack KV events and a replay
 * socket, over the simulator's engine model ({@code io.kvprefix.simulator.Engine}) run in real time.
 * Not a library: {@link io.kvprefix.standin.Standin} and {@link io.kvprefix.standin.StandinSettings}
 * are what the command line uses. The design, the endpoints, the wire formats and the vLLM source
 * each follows (file and commit) are docs/STANDIN.md.
 */
package io.kvprefix.standin;
