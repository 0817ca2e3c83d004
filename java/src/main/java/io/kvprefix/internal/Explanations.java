package io.kvprefix.internal;

import io.kvprefix.BlockHasher;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchExplanation.Salt;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * What every index's {@link PrefixIndex#explain} shares: an index walks the request's chain and
 * reports, per worker it knows, a {@link Probe} (depth, and the first later position it holds);
 * this class adds the other salts for a token request (each one an ordinary match of the tokens
 * hashed under that salt) and assembles the {@link MatchExplanation}.
 *
 * <p>Thread-safety: stateless.
 */
public final class Explanations {
    private Explanations() {}

    /**
     * One worker's walk over a request's chain.
     *
     * @param worker the worker
     * @param depth its depth
     * @param resumesAt the first position after {@code depth} at which it holds the request's block, or -1
     */
    public record Probe(Worker worker, int depth, int resumesAt) {}

    /** Orders salts: no LoRA name first, then by name; likewise the namespace. */
    public static final Comparator<Salt> SALT_ORDER = Comparator.comparing(
                    Salt::loraName, Comparator.nullsFirst(Comparator.<String>naturalOrder()))
            .thenComparing(Salt::cacheNamespace, Comparator.nullsFirst(Comparator.<String>naturalOrder()));

    /** An explanation from probes alone (a request given as local hashes: no other salt is tried). */
    public static MatchExplanation of(int queryBlocks, List<Probe> probes) {
        List<MatchExplanation.WorkerStop> out = new ArrayList<>(probes.size());
        for (Probe p : probes) {
            out.add(MatchExplanation.WorkerStop.of(p.worker(), queryBlocks, p.depth(), p.resumesAt(), null, 0));
        }
        return new MatchExplanation(queryBlocks, out);
    }

    /**
     * The explanation of a token request: {@code probe} walks its local hashes under {@code hasher};
     * then, for each salt of {@code seen} other than the request's own (and no salt, if the request
     * has one), the tokens are hashed under it and matched on {@code index}; a worker that matches
     * deeper under one of them gets the deepest such salt (the first in {@link #SALT_ORDER} on a tie).
     */
    public static MatchExplanation ofTokens(
            PrefixIndex index,
            Collection<Salt> seen,
            int[] tokens,
            int offset,
            int length,
            BlockHasher hasher,
            Function<long[], List<Probe>> probe) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        long[] locals = hasher.localHashes(tokens, offset, length);
        List<Probe> probes = probe.apply(locals);
        Salt own = new Salt(hasher.loraName(), hasher.cacheNamespace());
        List<Salt> salts = new ArrayList<>(seen);
        if (!own.equals(Salt.NONE) && !salts.contains(Salt.NONE)) {
            salts.add(Salt.NONE);
        }
        salts.remove(own);
        salts.sort(SALT_ORDER);
        Map<Worker, Salt> bestSalt = new HashMap<>();
        Map<Worker, Integer> bestDepth = new HashMap<>();
        for (Probe p : probes) {
            bestDepth.put(p.worker(), p.depth());
        }
        MatchResult r = new MatchResult();
        for (Salt s : salts) {
            BlockHasher h = BlockHasher.builder()
                    .blockSize(hasher.blockSize())
                    .seed(hasher.baseSeed())
                    .chainSeed(hasher.chainSeed())
                    .loraName(s.loraName())
                    .cacheNamespace(s.cacheNamespace())
                    .implementation(hasher.implementation())
                    .build();
            index.match(tokens, offset, length, h, r);
            for (int i = 0; i < r.size(); i++) {
                Integer best = bestDepth.get(r.worker(i));
                if (best != null && r.depth(i) > best) {
                    bestDepth.put(r.worker(i), r.depth(i));
                    bestSalt.put(r.worker(i), s);
                }
            }
        }
        List<MatchExplanation.WorkerStop> out = new ArrayList<>(probes.size());
        for (Probe p : probes) {
            Salt s = bestSalt.get(p.worker());
            out.add(MatchExplanation.WorkerStop.of(
                    p.worker(), locals.length, p.depth(), p.resumesAt(), s, s == null ? 0 : bestDepth.get(p.worker())));
        }
        return new MatchExplanation(locals.length, out);
    }
}
