/**
 * The op-stream format of docs/SPEC.md section 5: one JSON object per line, each an event to apply
 * to a {@link io.kvprefix.PrefixIndex} or a match to run against it, answered by one result line.
 *
 * <ul>
 *   <li>{@link io.kvprefix.opstream.Op}: one line as a value (an event, a match in hash or token
 *       form, or an invalid line with its reason). The format's only model.
 *   <li>{@link io.kvprefix.opstream.OpStreamParser}: the strict reader of one line (bytes in, an
 *       {@code Op} out, never an exception).
 *   <li>{@link io.kvprefix.opstream.OpStreamReader}: splits a stream into lines (at {@code \n} only,
 *       within a longest-line limit, in constant memory) and parses each; every reader of the format
 *       reads through it.
 *   <li>{@link io.kvprefix.opstream.OpStreamWriter}: the format's only writer, of input lines (ops,
 *       events, matches) and of result lines (statuses, scores).
 *   <li>{@link io.kvprefix.opstream.Replayer}: reads a stream, applies it to an index and writes
 *       one result line per input line; the engine of {@code kvprefix replay}.
 *   <li>{@link io.kvprefix.opstream.Implementations}: the index implementations by the names every
 *       {@code --impl} takes, the benchmarks' {@code impl} parameter and the differential tests' candidates.
 * </ul>
 *
 * <p><b>Why a module of its own.</b> The format is the project's external test surface: the command
 * line reads and writes it ({@code replay}, {@code gen-ops}, {@code bench --ops}, {@code listen
 * --queries}), the workloads write it, the benchmarks load it, and the differential tests speak it.
 * Kept apart from all of them, with the core library as its only dependency, each can use it without
 * depending on the others, and there is one model, one parser and one writer for everybody. The
 * module's tests hold the golden files of docs/SPEC.md section 7 and the differential suite (every
 * index path against the oracle of the core's test-jar, directly and through the replayer), with the
 * fixtures that make random streams and judge them.
 *
 * <p><b>The parser in three parts.</b> {@code internal.JsonLexer} is a strict RFC 8259 tokenizer that
 * knows nothing of ops: numbers are read from their digits, UTF-8 is validated everywhere, skipped
 * values nest at most {@link io.kvprefix.opstream.OpStreamParser#MAX_NESTING} deep, and every
 * malformed byte is explained with its column. {@code internal.FieldReader} reads the defined fields
 * of a line into {@code internal.LineFields}, checking each value against its type and range and
 * recording, not raising, the first problem with it, since only the op decides whether the field
 * matters. {@link io.kvprefix.opstream.OpStreamParser} builds the op: per op and form it decides
 * which fields are required, optional or ignored. The internal package uses nothing of this one, so
 * the dependency runs one way.
 *
 * <p><b>Invalid lines.</b> An {@link io.kvprefix.opstream.Op.Invalid} from the parser carries only
 * its reason (the parser keeps no copy of a line it rejects, however long); one made by a generator
 * of test streams also carries its text, so that the writer can write it again.
 */
package io.kvprefix.opstream;
