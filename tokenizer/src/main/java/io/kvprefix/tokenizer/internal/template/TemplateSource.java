package io.kvprefix.tokenizer.internal.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A chat template's source, checked and rewritten for Jinjava before it is compiled
 * (docs/TOKENIZER.md section 3.2): newlines normalised as Python's Jinja lexer does (its
 * {@code splitlines}, which also drops one trailing newline); every slice {@code x[a:b:c]} rewritten
 * to the {@code py_slice} filter (Python's slices, which Jinjava's parser cannot read with a step);
 * the {@code none} literal rewritten to {@link PyNone}; and every statement, filter, test, function,
 * method and {@code loop} attribute checked against the ones whose Python semantics kvprefix renders.
 * Anything else is refused here, at load time, instead of rendering differently from vLLM.
 *
 * <p>Thread-safety: stateless.
 */
public final class TemplateSource {
    private TemplateSource() {}

    static final Set<String> STATEMENTS = Set.of(
            "if",
            "elif",
            "else",
            "endif",
            "for",
            "endfor",
            "set",
            "macro",
            "endmacro",
            "break",
            "continue",
            "generation",
            "endgeneration");
    static final Set<String> FILTERS = Set.of(
            "tojson",
            "items",
            "trim",
            "string",
            "length",
            "count",
            "join",
            "reverse",
            "upper",
            "lower",
            "title",
            "capitalize",
            "replace",
            "py_slice",
            "first",
            "last",
            "list",
            "safe",
            "selectattr",
            "rejectattr",
            "map");
    static final Set<String> TESTS = Set.of(
            "none",
            "defined",
            "undefined",
            "true",
            "false",
            "boolean",
            "integer",
            "float",
            "number",
            "string",
            "mapping",
            "iterable",
            "sequence",
            "equalto",
            "eq",
            "in",
            "odd",
            "even");
    static final Set<String> FUNCTIONS = Set.of("namespace", "raise_exception", "strftime_now", "range", "py_none");
    static final Set<String> LOOP = Set.of("index", "index0", "first", "last", "length", "revindex", "revindex0");
    private static final Set<String> KEYWORDS =
            Set.of("in", "not", "and", "or", "is", "if", "elif", "else", "for", "true", "false", "True", "False");

    /** The source rewritten for Jinjava, or an {@link IllegalArgumentException} naming what is not supported. */
    public static String prepare(String template) {
        String src = pythonLines(template);
        Set<String> refused = new TreeSet<>();
        Set<String> macros = macroNames(src);
        StringBuilder out = new StringBuilder(src.length() + 64);
        int i = 0;
        while (i < src.length()) {
            int open = nextTag(src, i);
            if (open < 0) {
                out.append(src, i, src.length());
                break;
            }
            out.append(src, i, open);
            char kind = src.charAt(open + 1);
            if (kind == '#') {
                int end = src.indexOf("#}", open + 2);
                i = end < 0 ? src.length() : end + 2;
                out.append(src, open, i);
                continue;
            }
            int[] body = Lexer.region(src, open);
            List<Lexer.Token> tokens = Lexer.tokens(src.substring(body[0], body[1]));
            check(tokens, kind == '%', macros, refused);
            List<Lexer.Token> sig = Lexer.significant(tokens);
            boolean macro =
                    kind == '%' && !sig.isEmpty() && sig.get(0).is("macro"); // Jinjava splits its parameters at commas
            out.append(src, open, body[0])
                    .append(Lexer.join(rewrite(tokens, !macro)))
                    .append(src, body[1], body[2]);
            i = body[2];
        }
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException("the chat template uses " + String.join(", ", refused)
                    + ", which kvprefix does not render with Python Jinja's semantics (docs/TOKENIZER.md section 3.2)");
        }
        return out.toString();
    }

    /**
     * What Jinja's lexer does to a source before it tokenizes it: every {@code \r\n}, {@code \r} and
     * {@code \n} becomes {@code \n}, and one final line break is dropped ({@code keep_trailing_newline}
     * off).
     */
    static String pythonLines(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\n' && c != '\r') {
                b.append(c);
                continue;
            }
            if (c == '\r' && i + 1 < s.length() && s.charAt(i + 1) == '\n') {
                i++;
            }
            if (i + 1 < s.length()) {
                b.append('\n');
            }
        }
        return b.toString();
    }

    private static int nextTag(String s, int from) {
        for (int i = s.indexOf('{', from); i >= 0 && i + 1 < s.length(); i = s.indexOf('{', i + 1)) {
            char c = s.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') {
                return i;
            }
        }
        return -1;
    }

    private static Set<String> macroNames(String src) {
        Set<String> names = new TreeSet<>();
        var m = java.util.regex.Pattern.compile("\\{%[-+]?\\s*macro\\s+(\\w+)").matcher(src);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private static void check(List<Lexer.Token> t, boolean statement, Set<String> macros, Set<String> refused) {
        List<Lexer.Token> s = Lexer.significant(t);
        if (statement && !s.isEmpty() && !STATEMENTS.contains(s.get(0).text())) {
            refused.add("the statement {% " + s.get(0).text() + " %}");
        }
        for (int k = 0; k < s.size(); k++) {
            Lexer.Token x = s.get(k);
            String prev = k > 0 ? s.get(k - 1).text() : "";
            boolean call = k + 1 < s.size() && s.get(k + 1).text().equals("(");
            if (x.is("~")) {
                refused.add("the ~ operator");
            }
            if (!x.name() || KEYWORDS.contains(x.text()) || (x.is("not") && prev.equals("is"))) {
                continue;
            }
            if (prev.equals("|")) {
                need(FILTERS, x.text(), "the filter |" + x.text(), refused);
            } else if (prev.equals("is")
                    || (prev.equals("not") && k > 1 && s.get(k - 2).is("is"))) {
                need(TESTS, x.text(), "the test 'is " + x.text() + "'", refused);
            } else if (prev.equals(".")) {
                checkAttribute(s, k, call, refused);
            } else if (call
                    && !macros.contains(x.text())
                    && !(statement && k == 1 && s.get(0).is("macro"))) {
                need(FUNCTIONS, x.text(), "the function " + x.text() + "()", refused);
            }
        }
    }

    private static void checkAttribute(List<Lexer.Token> s, int k, boolean call, Set<String> refused) {
        String name = s.get(k).text();
        if (call && !PyMethods.STRING_METHODS.contains(name) && !PyMethods.DICT_METHODS.contains(name)) {
            refused.add("the method ." + name + "()");
        }
        if (k > 1 && s.get(k - 2).is("loop")) {
            need(LOOP, name, "loop." + name, refused);
        }
    }

    private static void need(Set<String> allowed, String name, String what, Set<String> refused) {
        if (!allowed.contains(name)) {
            refused.add(what);
        }
    }

    /** The tokens with slices turned into {@code py_slice} and the {@code none} literal into {@code py_none()}. */
    static List<Lexer.Token> rewrite(List<Lexer.Token> in) {
        return rewrite(in, true);
    }

    private static List<Lexer.Token> rewrite(List<Lexer.Token> in, boolean wrapKeywords) {
        List<Lexer.Token> t = new ArrayList<>(in);
        for (int k = 0; k < t.size(); k++) {
            Lexer.Token x = t.get(k);
            if (x.kind() == Lexer.Kind.STRING && x.text().indexOf('\\') >= 0) {
                t.set(k, new Lexer.Token(Lexer.forJinjava(x.text()), Lexer.Kind.STRING));
            } else if (x.name() && (x.is("none") || x.is("None")) && literalPosition(t, k)) {
                t.set(k, new Lexer.Token("py_none()", Lexer.Kind.NAME));
            } else if (x.is("[")) {
                int close = Lexer.matching(t, k);
                List<Integer> colons = Lexer.topLevel(t, k + 1, close, ":");
                if (close > 0 && !colons.isEmpty()) {
                    k = Slices.replace(t, k, close, colons);
                }
            } else if (wrapKeywords && x.is("=") && keywordArgument(t, k)) {
                wrapArgument(t, k);
            }
        }
        return t;
    }

    /** {@code f(name=expr)}: Jinjava binds {@code name=expr - 1} as {@code (name=expr) - 1}. */
    private static boolean keywordArgument(List<Lexer.Token> t, int k) {
        int name = Lexer.previous(t, k);
        int before = name < 0 ? -1 : Lexer.previous(t, name);
        return name >= 0
                && t.get(name).name()
                && before >= 0
                && (t.get(before).is("(") || t.get(before).is(","));
    }

    private static void wrapArgument(List<Lexer.Token> t, int k) {
        int depth = 0;
        int end = t.size();
        for (int i = k + 1; i < t.size(); i++) {
            String x = t.get(i).kind() == Lexer.Kind.OP ? t.get(i).text() : "";
            if (x.equals("(") || x.equals("[") || x.equals("{")) {
                depth++;
            } else if ((x.equals(")") || x.equals("]") || x.equals("}")) && depth-- == 0) {
                end = i;
                break;
            } else if (x.equals(",") && depth == 0) {
                end = i;
                break;
            }
        }
        t.add(end, new Lexer.Token(")", Lexer.Kind.OP));
        t.add(k + 1, new Lexer.Token("(", Lexer.Kind.OP));
    }

    private static boolean literalPosition(List<Lexer.Token> t, int k) {
        int p = Lexer.previous(t, k);
        if (p >= 0 && (t.get(p).is(".") || t.get(p).is("is"))) {
            return false;
        }
        if (p >= 0 && t.get(p).is("not")) {
            int before = Lexer.previous(t, p);
            return before < 0 || !t.get(before).is("is");
        }
        int n = Lexer.next(t, k);
        return n < 0 || !(t.get(n).is("=") || t.get(n).is("("));
    }
}
