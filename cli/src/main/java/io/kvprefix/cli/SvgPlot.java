package io.kvprefix.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small log-log line chart written as standalone SVG (no scripts, no external resources), for
 * the sweep's offered-versus-achieved figure: one line per series, optional y = x reference line.
 *
 * <p>Thread-safety: not thread-safe; build and render on one thread.
 */
final class SvgPlot {
    /** One line of the chart. */
    public record Series(String name, double[] x, double[] y) {}

    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<Series> series = new ArrayList<>();
    private boolean identity;

    public SvgPlot(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    public SvgPlot add(Series s) {
        series.add(s);
        return this;
    }

    /** Draws the y = x line (achieved equals offered). */
    public SvgPlot identityLine() {
        identity = true;
        return this;
    }

    private static final int W = 760, H = 500, LEFT = 90, RIGHT = 190, TOP = 50, BOTTOM = 70;
    private static final int PW = W - LEFT - RIGHT, PH = H - TOP - BOTTOM;

    /** The decades the axes span, and where a value lands on them. */
    private record Axes(double lx0, double lx1, double ly0, double ly1) {
        double px(double v) {
            return LEFT + (Math.log10(v) - lx0) / (lx1 - lx0) * PW;
        }

        double py(double v) {
            return TOP + PH - (Math.log10(v) - ly0) / (ly1 - ly0) * PH;
        }
    }

    /** The chart as an SVG document. */
    public String render() {
        Axes a = axes();
        StringBuilder sb = new StringBuilder();
        header(sb);
        grid(sb, a);
        frame(sb);
        if (identity) {
            double lo = Math.pow(10, Math.max(a.lx0(), a.ly0())), hi = Math.pow(10, Math.min(a.lx1(), a.ly1()));
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>%n",
                    a.px(lo),
                    a.py(lo),
                    a.px(hi),
                    a.py(hi)));
        }
        int li = 0;
        for (Series s : series) {
            line(sb, a, s, COLORS[li % COLORS.length], TOP + 10 + li * 20);
            li++;
        }
        if (identity) {
            int ly = TOP + 10 + li * 20;
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>%n",
                    LEFT + PW + 15,
                    ly,
                    LEFT + PW + 40,
                    ly));
            sb.append(String.format(
                    Locale.ROOT, "<text x=\"%d\" y=\"%d\">achieved = offered</text>%n", LEFT + PW + 46, ly + 4));
        }
        return sb.append("</svg>\n").toString();
    }

    /** Whole decades around every positive point (and around y = x, if drawn). */
    private Axes axes() {
        double minX = Double.MAX_VALUE, maxX = 0, minY = Double.MAX_VALUE, maxY = 0;
        for (Series s : series) {
            for (int i = 0; i < s.x().length; i++) {
                if (s.x()[i] > 0 && s.y()[i] > 0) {
                    minX = Math.min(minX, s.x()[i]);
                    maxX = Math.max(maxX, s.x()[i]);
                    minY = Math.min(minY, s.y()[i]);
                    maxY = Math.max(maxY, s.y()[i]);
                }
            }
        }
        if (maxX == 0) {
            minX = minY = 1;
            maxX = maxY = 10;
        }
        if (identity) {
            minY = Math.min(minY, minX);
            maxY = Math.max(maxY, maxX);
        }
        double lx0 = Math.floor(Math.log10(minX)), lx1 = Math.ceil(Math.log10(maxX));
        double ly0 = Math.floor(Math.log10(minY)), ly1 = Math.ceil(Math.log10(maxY));
        if (lx1 <= lx0) {
            lx1 = lx0 + 1;
        }
        if (ly1 <= ly0) {
            ly1 = ly0 + 1;
        }
        return new Axes(lx0, lx1, ly0, ly1);
    }

    /** The document's start, its white background and the title. */
    private void header(StringBuilder sb) {
        sb.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n",
                W,
                H,
                W,
                H));
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        // A long title ("what: which stream") goes on two lines, so it stays inside the picture.
        int colon = title.indexOf(": ");
        if (title.length() > 60 && colon > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">%s</text>%n",
                    LEFT,
                    esc(title.substring(0, colon))));
            sb.append(String.format(
                    Locale.ROOT, "<text x=\"%d\" y=\"40\">%s</text>%n", LEFT, esc(title.substring(colon + 2))));
        } else {
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"28\" font-size=\"16\" font-weight=\"bold\">%s</text>%n",
                    LEFT,
                    esc(title)));
        }
    }

    /** A grid line and a label at every decade of both axes. */
    private static void grid(StringBuilder sb, Axes a) {
        for (double e = a.lx0(); e <= a.lx1(); e++) {
            double x = a.px(Math.pow(10, e));
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n",
                    x,
                    TOP,
                    x,
                    TOP + PH));
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x,
                    TOP + PH + 18,
                    human(Math.pow(10, e))));
        }
        for (double e = a.ly0(); e <= a.ly1(); e++) {
            double y = a.py(Math.pow(10, e));
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n",
                    LEFT,
                    y,
                    LEFT + PW,
                    y));
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
                    LEFT - 8,
                    y + 4,
                    human(Math.pow(10, e))));
        }
    }

    /** The plot's border and the axis labels. */
    private void frame(StringBuilder sb) {
        sb.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>%n",
                LEFT,
                TOP,
                PW,
                PH));
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                LEFT + PW / 2,
                H - 20,
                esc(xLabel)));
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"20\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 20 %d)\">%s</text>%n",
                TOP + PH / 2,
                TOP + PH / 2,
                esc(yLabel)));
    }

    /** One series: its line, its points and its legend entry at height {@code ly}. */
    private static void line(StringBuilder sb, Axes a, Series s, String color, int ly) {
        StringBuilder pts = new StringBuilder();
        for (int i = 0; i < s.x().length; i++) {
            if (s.x()[i] > 0 && s.y()[i] > 0) {
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", a.px(s.x()[i]), a.py(s.y()[i])));
            }
        }
        sb.append(String.format(
                Locale.ROOT,
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                pts.toString().trim(),
                color));
        for (int i = 0; i < s.x().length; i++) {
            if (s.x()[i] > 0 && s.y()[i] > 0) {
                sb.append(String.format(
                        Locale.ROOT,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n",
                        a.px(s.x()[i]),
                        a.py(s.y()[i]),
                        color));
            }
        }
        sb.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                LEFT + PW + 15,
                ly,
                LEFT + PW + 40,
                ly,
                color));
        sb.append(String.format(
                Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", LEFT + PW + 46, ly + 4, esc(s.name())));
    }

    static String human(double v) {
        if (v >= 1e9) {
            return String.format(Locale.ROOT, "%.0fG", v / 1e9);
        }
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%.0fM", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%.0fk", v / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
