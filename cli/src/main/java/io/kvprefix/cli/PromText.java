package io.kvprefix.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One scrape of a Prometheus text page (format 0.0.4) as the live leg reads {@code kvprefix serve}'s
 * {@code /metrics}: each sample's name, labels and value; sums over series, and a histogram's
 * quantile bound from the difference of two scrapes (docs/OPERATING.md section 12).
 *
 * <p>Thread-safety: immutable after parsing.
 */
final class PromText {
    /** One sample line. */
    record Sample(String name, String labels, double value) {}

    private final List<Sample> samples;

    private PromText(List<Sample> samples) {
        this.samples = samples;
    }

    /** Parses a page; comment and blank lines are skipped, and so is a line it cannot read. */
    static PromText parse(String page) {
        List<Sample> out = new ArrayList<>();
        for (String line : page.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            if (space <= 0) {
                continue;
            }
            int nameEnd = brace >= 0 && brace < space ? brace : line.indexOf(' ');
            String labels = brace >= 0 && brace < space ? line.substring(brace, line.lastIndexOf('}') + 1) : "";
            try {
                out.add(new Sample(line.substring(0, nameEnd), labels, Double.parseDouble(line.substring(space + 1))));
            } catch (NumberFormatException e) {
                // not a sample of the format (a timestamp would follow the value): left out
            }
        }
        return new PromText(List.copyOf(out));
    }

    /** The sum of every series of {@code name} whose labels contain {@code labelPart} ("" for all). */
    double sum(String name, String labelPart) {
        double s = 0;
        for (Sample x : samples) {
            if (x.name().equals(name) && x.labels().contains(labelPart)) {
                s += x.value();
            }
        }
        return s;
    }

    /** {@code name}'s buckets by their upper bound, counts summed over series. */
    TreeMap<Double, Double> buckets(String name) {
        TreeMap<Double, Double> b = new TreeMap<>();
        for (Sample x : samples) {
            if (x.name().equals(name + "_bucket")) {
                int le = x.labels().indexOf("le=\"");
                String bound = x.labels().substring(le + 4, x.labels().indexOf('"', le + 4));
                double key = bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound);
                b.merge(key, x.value(), Double::sum);
            }
        }
        return b;
    }

    /**
     * The smallest bucket bound of histogram {@code name} holding at least a {@code q} share of the
     * observations made between {@code before} and {@code after} (NaN without any).
     */
    static double quantileBound(PromText before, PromText after, String name, double q) {
        TreeMap<Double, Double> a = after.buckets(name);
        TreeMap<Double, Double> b = before.buckets(name);
        double total = a.isEmpty() ? 0 : a.lastEntry().getValue() - b.getOrDefault(a.lastKey(), 0.0);
        if (total <= 0) {
            return Double.NaN;
        }
        for (Map.Entry<Double, Double> e : a.entrySet()) {
            if (e.getValue() - b.getOrDefault(e.getKey(), 0.0) >= q * total) {
                return e.getKey();
            }
        }
        return Double.POSITIVE_INFINITY;
    }
}
