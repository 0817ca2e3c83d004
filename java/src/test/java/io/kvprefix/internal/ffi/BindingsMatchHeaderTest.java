package io.kvprefix.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Parses {@code include/kvprefix.h} and fails if a declared function is not bound by
 * {@link KvpBindings}, is bound with another shape, or if a binding has no declaration.
 */
class BindingsMatchHeaderTest {

    private static final Pattern DECL =
            Pattern.compile("KVP_API\\s+([A-Za-z_][\\w\\s\\*]*?)\\s*\\b(kvp_\\w+)\\s*\\(([^)]*)\\)\\s*;");

    static Map<String, FunctionDescriptor> parseHeader() throws IOException {
        String text = Files.readString(RepoPaths.root().resolve("include/kvprefix.h"));
        text = text.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("//[^\\n]*", " ");
        Map<String, FunctionDescriptor> out = new LinkedHashMap<>();
        Matcher m = DECL.matcher(text);
        while (m.find()) {
            String ret = m.group(1).trim();
            String name = m.group(2);
            List<MemoryLayout> params = new ArrayList<>();
            String plist = m.group(3).trim();
            if (!plist.equals("void") && !plist.isEmpty()) {
                for (String p : plist.split(",")) {
                    params.add(layoutOf(p.trim(), name));
                }
            }
            MemoryLayout[] args = params.toArray(new MemoryLayout[0]);
            out.put(
                    name,
                    ret.equals("void")
                            ? FunctionDescriptor.ofVoid(args)
                            : FunctionDescriptor.of(layoutOf(ret + " x", name), args));
        }
        return out;
    }

    /** The FFM layout of one C parameter declaration ("const uint32_t *tokens"). */
    private static MemoryLayout layoutOf(String decl, String fn) {
        if (decl.contains("*")) {
            return ADDRESS;
        }
        String type = decl.replace("const", "").trim().split("\\s+")[0];
        return switch (type) {
            case "int32_t", "uint32_t" -> JAVA_INT;
            case "int64_t", "uint64_t" -> JAVA_LONG;
            default -> throw new AssertionError(fn + ": unsupported C type in header: " + decl);
        };
    }

    @Test
    void everyDeclaredFunctionIsBoundWithTheSameShape() throws IOException {
        Map<String, FunctionDescriptor> header = parseHeader();
        assertFalse(header.isEmpty(), "no KVP_API declarations parsed from include/kvprefix.h");
        for (var e : header.entrySet()) {
            assertTrue(KvpBindings.DESCRIPTORS.containsKey(e.getKey()), "declared but not bound: " + e.getKey());
            assertEquals(e.getValue(), KvpBindings.DESCRIPTORS.get(e.getKey()), "shape of " + e.getKey());
        }
        for (String bound : KvpBindings.DESCRIPTORS.keySet()) {
            assertTrue(header.containsKey(bound), "bound but not declared in the header: " + bound);
        }
    }

    @Test
    void libraryLoadsAndItsVersionMatches() {
        assertTrue(NativeLibrary.isAvailable(), NativeLibrary.failure());
        int v = KvpBindings.version();
        assertEquals(NativeLibrary.EXPECTED_MAJOR, v >>> 16);
        assertTrue((v & 0xFFFF) >= NativeLibrary.EXPECTED_MINOR);
    }
}
