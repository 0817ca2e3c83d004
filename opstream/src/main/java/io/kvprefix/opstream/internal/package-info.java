/**
 * The op-stream parser's machinery, below {@link io.kvprefix.opstream.OpStreamParser}: the strict
 * JSON tokenizer ({@code JsonLexer}, with {@code Utf8}), and the reading and checking of a line's
 * defined fields ({@code FieldReader} into {@code LineFields}). The op builders, which decide per op
 * which fields count, stay in the public package.
 *
 * <p>The split follows the concerns: the lexer knows RFC 8259 and nothing of ops; the field reader
 * knows the format's field names, types and ranges, and records the first problem with each value
 * instead of raising it, because a problem in a field that the line's op ignores must not make the
 * line invalid. Nothing here uses the public package, so the dependency runs one way, and the lexer
 * and the reader share state through package-private fields: one line is read with no copying and
 * no allocation beyond the op's own arrays.
 */
package io.kvprefix.opstream.internal;
