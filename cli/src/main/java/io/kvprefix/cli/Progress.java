package io.kvprefix.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A progress bar on standard error for commands that run longer than a few seconds: it appears
 * only after two seconds and only redraws a few times a second; on a terminal it redraws in place,
 * otherwise (a log file, CI) it prints a plain line at most every ten seconds.
 *
 * <p>Thread-safety: {@link #update} may be called from any thread; updates are serialised.
 */
public final class Progress {
    private static final long SHOW_AFTER_NS = 2_000_000_000L;
    private final String label;
    private final long total;
    private final PrintStream err;
    private final long start = System.nanoTime();
    private final boolean terminal = System.console() != null;
    private long lastDraw;
    private boolean shown;

    public Progress(String label, long total, PrintStream err) {
        this.label = label;
        this.total = Math.max(1, total);
        this.err = err;
    }

    /** Reports that {@code done} of the total units are finished. */
    public synchronized void update(long done) {
        long now = System.nanoTime();
        if (now - start < SHOW_AFTER_NS) {
            return;
        }
        long every = terminal ? 200_000_000L : 10_000_000_000L;
        if (shown && now - lastDraw < every && done < total) {
            return;
        }
        lastDraw = now;
        shown = true;
        double frac = Math.min(1.0, done / (double) total);
        int width = 30;
        int filled = (int) Math.round(frac * width);
        String bar = "#".repeat(filled) + "-".repeat(width - filled);
        double elapsed = (now - start) / 1e9;
        double eta = frac > 0 ? elapsed / frac - elapsed : 0;
        String line = String.format(
                Locale.ROOT,
                "%s [%s] %3.0f%% %d/%d  %.0fs elapsed, ~%.0fs left",
                label,
                bar,
                frac * 100,
                done,
                total,
                elapsed,
                eta);
        if (terminal) {
            err.print("\r" + line);
        } else {
            err.println(line);
        }
        err.flush();
    }

    /** Ends the bar's line (if it was drawn on a terminal). */
    public synchronized void finish() {
        if (shown && terminal) {
            err.println();
        }
    }
}
