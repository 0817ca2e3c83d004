package io.kvprefix.tokenizer.internal.template;

import com.hubspot.jinjava.util.HasObjectTruthValue;

/**
 * Python's {@code None} inside a template: a JSON {@code null} of the request and the template's
 * {@code none} literal. Jinjava has one {@code null} for both None and an undefined name, which
 * Python tells apart ({@code {{ x }}} prints {@code None} for one and nothing for the other;
 * {@code is defined} and {@code default} differ too), so None is this object: false in a condition,
 * printed as {@code None}, {@code null} in {@code tojson}, and the {@code none} test recognises it
 * (docs/TOKENIZER.md section 3.2).
 *
 * <p>Thread-safety: immutable singleton.
 */
public final class PyNone implements HasObjectTruthValue {
    /** The one None. */
    public static final PyNone NONE = new PyNone();

    private PyNone() {}

    /** The template function {@code py_none()} that the {@code none} literal is rewritten to. */
    public static PyNone none() {
        return NONE;
    }

    /** True for Python's None and for Jinjava's null. */
    public static boolean isNone(Object o) {
        return o == null || o == NONE;
    }

    @Override
    public boolean getObjectTruthValue() {
        return false;
    }

    @Override
    public String toString() {
        return "None";
    }
}
