/**
 * What the public types need from the implementations without naming them: the factory behind
 * {@code PrefixIndex.offHeap/heap} ({@link io.kvprefix.internal.IndexFactory}) and the accessor
 * through which an index fills a {@code MatchResult}, whose mutators are not public
 * ({@link io.kvprefix.internal.MatchResults}).
 */
package io.kvprefix.internal;
