package io.kvprefix.tokenizer.internal.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Rewrites a slice {@code base[a:b:c]} in a template's tokens to {@code (base|py_slice(a, b, c))}:
 * Jinjava's parser reads no step, and its slices count UTF-16 units where Python counts code points
 * (docs/TOKENIZER.md section 3.2). The base is the postfix chain before the bracket: names joined by
 * dots, calls, subscripts, a string literal.
 *
 * <p>Thread-safety: stateless.
 */
final class Slices {
    private Slices() {}

    private static final Set<String> KEYWORDS = Set.of("in", "not", "and", "or", "is", "if", "else", "for");

    /** Replaces the slice from {@code open} to {@code close}; returns the index to continue scanning from. */
    static int replace(List<Lexer.Token> t, int open, int close, List<Integer> colons) {
        if (colons.size() > 2) {
            throw new IllegalArgumentException("the chat template has a slice with more than two colons");
        }
        int start = baseStart(t, open);
        if (start < 0) {
            throw new IllegalArgumentException(
                    "the chat template slices something that is not a name, call, subscript or string: "
                            + Lexer.join(t.subList(0, close + 1)).strip());
        }
        List<List<Lexer.Token>> parts = new ArrayList<>();
        int from = open + 1;
        for (int c : colons) {
            parts.add(t.subList(from, c));
            from = c + 1;
        }
        parts.add(t.subList(from, close));
        StringBuilder b = new StringBuilder("(")
                .append(Lexer.join(t.subList(start, open)))
                .append("|py_slice(");
        for (int p = 0; p < 3; p++) {
            String part = p < parts.size()
                    ? Lexer.join(TemplateSource.rewrite(parts.get(p))).strip()
                    : "";
            b.append(p > 0 ? ", " : "").append(part.isEmpty() ? "py_none()" : part);
        }
        b.append("))");
        List<Lexer.Token> replaced = new ArrayList<>(t.subList(0, start));
        replaced.add(new Lexer.Token(b.toString(), Lexer.Kind.NAME));
        int resume = replaced.size() - 1;
        replaced.addAll(t.subList(close + 1, t.size()));
        t.clear();
        t.addAll(replaced);
        return resume;
    }

    private static int baseStart(List<Lexer.Token> t, int open) {
        int i = open - 1;
        int start = -1;
        while (i >= 0) {
            Lexer.Token x = t.get(i);
            if (x.is(")") || x.is("]")) {
                i = Lexer.opening(t, i);
                if (i < 0) {
                    return -1;
                }
                start = i;
                i--;
                if (i >= 0 && t.get(i).name() && !KEYWORDS.contains(t.get(i).text())) {
                    continue; // a call or subscript of a name
                }
                if (i >= 0 && (t.get(i).is(")") || t.get(i).is("]"))) {
                    continue;
                }
                return start;
            } else if (x.name() && !KEYWORDS.contains(x.text())) {
                start = i;
                i--;
                if (i >= 0 && t.get(i).is(".")) {
                    i--;
                    continue;
                }
                return start;
            } else if (x.kind() == Lexer.Kind.STRING) {
                return i;
            } else {
                return start;
            }
        }
        return start;
    }
}
