/**
 * The metrics module's implementation: the match-timing decorator and the snapshot memo the binders
 * read their gauges and counters from, and the endpoint's HTTP exchange ({@code HttpConnection}).
 *
 * <p>A decorator ({@code TimedPrefixIndex}) rather than a hook in the index: the index's match path
 * stays what it is (no branch, no field read), and an embedder who does not ask for match latency
 * pays nothing. A snapshot memo ({@code Snapshots}) because a scrape reads dozens of meters of one
 * object: each of them reading a fresh {@code stats()} would take dozens of snapshots of one index or
 * subscriber per scrape and could mix values from different moments.
 */
package io.kvprefix.metrics.internal;
