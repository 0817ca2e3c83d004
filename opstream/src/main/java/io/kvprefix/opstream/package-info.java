/**
 * The op-stream format of docs/SPEC.md section 5: one JSON object per line, each an event to apply
 * to a {@link io.kvprefix.PrefixIndex} or a match to run against it, answered by one result line.
 *
 * <ul>
 *   <li>{@link io.kvprefix.opstream.ParsedOp}: one line as a value (an event, a match in hash or
 *       token form, or an invalid line with its reason).
 *   <li>{@link io.kvprefix.opstream.OpStreamParser}: the strict reader of one line (bytes in, a
 *       {@code ParsedOp} out, never an exception).
 *   <li>{@link io.kvprefix.opstream.OpStreamWriter}: the writer of input lines (events, matches) and
 *       result lines (statuses, scores).
 *   <li>{@link io.kvprefix.opstream.Replayer}: reads a stream, applies it to an index and writes
 *       one result line per input line; the engine of {@code kvprefix replay}.
 * </ul>
 *
 * <p><b>Why a module of its own.</b> The format is the project's external test surface: the command
 * line reads and writes it ({@code replay}, {@code gen-ops}, {@code bench --ops}, {@code listen
 * --queries}), the benchmarks load it, and the differential tests speak it. Keeping it apart from
 * all of them, with the core library as its only dependency, lets each of them use it without
 * depending on the others, and gives the format one model, one parser and one writer.
 */
package io.kvprefix.opstream;
