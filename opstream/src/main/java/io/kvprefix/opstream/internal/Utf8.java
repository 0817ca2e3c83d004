package io.kvprefix.opstream.internal;

/**
 * UTF-8 as RFC 3629 defines it, for the {@link JsonLexer}: the length of a valid multi-byte
 * sequence (no overlong forms, no surrogates, nothing above U+10FFFF), and a code point encoded.
 *
 * <p>Thread-safety: stateless.
 */
final class Utf8 {
    private Utf8() {}

    /**
     * Length of the valid UTF-8 sequence of 2 to 4 bytes at {@code b[p]} that ends before
     * {@code end}, or -1 if there is none (RFC 3629: no overlongs, surrogates or code points above
     * U+10FFFF).
     */
    static int sequenceLength(byte[] b, int p, int end) {
        int c = b[p] & 0xFF;
        int more;
        int lo = 0x80;
        int hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c == 0xE0) {
            more = 2;
            lo = 0xA0;
        } else if (c >= 0xE1 && c <= 0xEC || c == 0xEE || c == 0xEF) {
            more = 2;
        } else if (c == 0xED) {
            more = 2;
            hi = 0x9F;
        } else if (c == 0xF0) {
            more = 3;
            lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3) {
            more = 3;
        } else if (c == 0xF4) {
            more = 3;
            hi = 0x8F;
        } else {
            return -1;
        }
        if (p + more >= end) {
            return -1;
        }
        int c1 = b[p + 1] & 0xFF;
        if (c1 < lo || c1 > hi) {
            return -1;
        }
        for (int k = 2; k <= more; k++) {
            int ck = b[p + k] & 0xFF;
            if (ck < 0x80 || ck > 0xBF) {
                return -1;
            }
        }
        return more + 1;
    }

    /** Writes code point {@code cp} as UTF-8 at {@code buf[n]} (room for 4 bytes needed); returns the new length. */
    static int append(byte[] buf, int n, int cp) {
        if (cp < 0x80) {
            buf[n++] = (byte) cp;
        } else if (cp < 0x800) {
            buf[n++] = (byte) (0xC0 | cp >> 6);
            buf[n++] = (byte) (0x80 | cp & 0x3F);
        } else if (cp < 0x10000) {
            buf[n++] = (byte) (0xE0 | cp >> 12);
            buf[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
            buf[n++] = (byte) (0x80 | cp & 0x3F);
        } else {
            buf[n++] = (byte) (0xF0 | cp >> 18);
            buf[n++] = (byte) (0x80 | cp >> 12 & 0x3F);
            buf[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
            buf[n++] = (byte) (0x80 | cp & 0x3F);
        }
        return n;
    }
}
