package io.kvprefix.tokenizer.internal.template;

import java.util.ArrayList;
import java.util.List;

/**
 * A small lexer for the inside of Jinja tags ({@code {{ ... }}}, {@code {% ... %}}): names, numbers,
 * string literals, operators and whitespace, enough to check and rewrite a template without
 * touching its strings (docs/TOKENIZER.md section 3.2).
 *
 * <p>Thread-safety: stateless.
 */
final class Lexer {
    private Lexer() {}

    enum Kind {
        NAME,
        NUMBER,
        STRING,
        OP,
        SPACE
    }

    record Token(String text, Kind kind) {
        boolean is(String s) {
            return text.equals(s);
        }

        boolean name() {
            return kind == Kind.NAME;
        }
    }

    /**
     * The tag opening at {@code open}: {start of its body, end of its body, end of the tag}, the body
     * without the whitespace-control marks. The end is the first closing mark outside strings and
     * outside braces the body opened (a dict literal's {@code }}}).
     */
    static int[] region(String s, int open) {
        boolean expr = s.charAt(open + 1) == '{';
        int start = open + 2;
        if (start < s.length() && (s.charAt(start) == '-' || s.charAt(start) == '+')) {
            start++;
        }
        int depth = 0;
        for (int i = start; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                i = stringEnd(s, i) - 1;
            } else if (c == '{') {
                depth++;
            } else if (c == '}' && depth > 0) {
                depth--;
            } else if (depth == 0 && s.startsWith(expr ? "}}" : "%}", i)) {
                int end = i > start && (s.charAt(i - 1) == '-' || s.charAt(i - 1) == '+') ? i - 1 : i;
                return new int[] {start, end, i + 2};
            }
        }
        throw new IllegalArgumentException("the chat template has an unclosed tag at offset " + open);
    }

    private static int stringEnd(String s, int i) {
        char q = s.charAt(i);
        for (int j = i + 1; j < s.length(); j++) {
            char c = s.charAt(j);
            if (c == '\\') {
                j++;
            } else if (c == q) {
                return j + 1;
            }
        }
        throw new IllegalArgumentException("the chat template has an unclosed string literal at offset " + i);
    }

    static List<Token> tokens(String s) {
        List<Token> out = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            int j = i + 1;
            Kind kind;
            if (Character.isWhitespace(c)) {
                while (j < s.length() && Character.isWhitespace(s.charAt(j))) {
                    j++;
                }
                kind = Kind.SPACE;
            } else if (c == '\'' || c == '"') {
                j = stringEnd(s, i);
                kind = Kind.STRING;
            } else if (Character.isLetter(c) || c == '_') {
                while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
                    j++;
                }
                kind = Kind.NAME;
            } else if (Character.isDigit(c)) {
                while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '.')) {
                    j++;
                }
                kind = Kind.NUMBER;
            } else {
                if (j < s.length() && "== != <= >= // **".contains(s.substring(i, j + 1)) && s.charAt(j) != ' ') {
                    j++;
                }
                kind = Kind.OP;
            }
            out.add(new Token(s.substring(i, j), kind));
            i = j;
        }
        return out;
    }

    /**
     * A string literal as Jinja reads it (Python's {@code unicode-escape} decoding of its body:
     * {@code \\n}, {@code \\t}, {@code \\xhh}, {@code \\uXXXX}, {@code \\UXXXXXXXX}, octal, ...; an
     * unknown escape stays as written), written back as a literal Jinjava reads as the same string:
     * Jinjava's lexer knows fewer escapes ({@code \\u} is an error there).
     */
    static String forJinjava(String literal) {
        String v = pythonValue(literal.substring(1, literal.length() - 1));
        StringBuilder b = new StringBuilder("'");
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '\\' || c == '\'') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('\'').toString();
    }

    private static String pythonValue(String body) {
        StringBuilder b = new StringBuilder(body.length());
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c != '\\' || i + 1 == body.length()) {
                b.append(c);
                continue;
            }
            char e = body.charAt(++i);
            int simple = "\\'\"abfnrtv\n".indexOf(e);
            if (simple >= 0) {
                if (e != '\n') { // a backslash before a line break joins the lines
                    b.append("\\'\"\u0007\b\f\n\r\t\u000b".charAt(simple));
                }
            } else if (e == 'x' || e == 'u' || e == 'U') {
                int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                b.appendCodePoint(Integer.parseInt(body.substring(i + 1, i + 1 + n), 16));
                i += n;
            } else if (e >= '0' && e <= '7') {
                int j = i;
                while (j < body.length() && j < i + 3 && body.charAt(j) >= '0' && body.charAt(j) <= '7') {
                    j++;
                }
                b.append((char) Integer.parseInt(body.substring(i, j), 8));
                i = j - 1;
            } else {
                b.append('\\').append(e);
            }
        }
        return b.toString();
    }

    static String join(List<Token> tokens) {
        StringBuilder b = new StringBuilder();
        tokens.forEach(t -> b.append(t.text()));
        return b.toString();
    }

    static List<Token> significant(List<Token> t) {
        return t.stream().filter(x -> x.kind() != Kind.SPACE).toList();
    }

    /** The index of the previous token that is not whitespace, or -1. */
    static int previous(List<Token> t, int k) {
        for (int i = k - 1; i >= 0; i--) {
            if (t.get(i).kind() != Kind.SPACE) {
                return i;
            }
        }
        return -1;
    }

    /** The index of the next token that is not whitespace, or -1. */
    static int next(List<Token> t, int k) {
        for (int i = k + 1; i < t.size(); i++) {
            if (t.get(i).kind() != Kind.SPACE) {
                return i;
            }
        }
        return -1;
    }

    /** The index of the bracket that closes the one at {@code k} ({@code (}, {@code [} or {@code {}), or -1. */
    static int matching(List<Token> t, int k) {
        int depth = 0;
        for (int i = k; i < t.size(); i++) {
            String x = t.get(i).kind() == Kind.OP ? t.get(i).text() : "";
            if (x.equals("(") || x.equals("[") || x.equals("{")) {
                depth++;
            } else if (x.equals(")") || x.equals("]") || x.equals("}")) {
                if (--depth == 0) {
                    return i;
                }
            }
        }
        return -1;
    }

    /** The index of the bracket that opens the one closing at {@code k}, or -1. */
    static int opening(List<Token> t, int k) {
        int depth = 0;
        for (int i = k; i >= 0; i--) {
            String x = t.get(i).kind() == Kind.OP ? t.get(i).text() : "";
            if (x.equals(")") || x.equals("]") || x.equals("}")) {
                depth++;
            } else if (x.equals("(") || x.equals("[") || x.equals("{")) {
                if (--depth == 0) {
                    return i;
                }
            }
        }
        return -1;
    }

    /** The indices in [from, to) of the operator {@code op} at bracket depth zero. */
    static List<Integer> topLevel(List<Token> t, int from, int to, String op) {
        List<Integer> out = new ArrayList<>();
        int depth = 0;
        for (int i = from; i < to && i >= 0; i++) {
            String x = t.get(i).kind() == Kind.OP ? t.get(i).text() : "";
            if (x.equals("(") || x.equals("[") || x.equals("{")) {
                depth++;
            } else if (x.equals(")") || x.equals("]") || x.equals("}")) {
                depth--;
            } else if (depth == 0 && x.equals(op)) {
                out.add(i);
            }
        }
        return out;
    }
}
