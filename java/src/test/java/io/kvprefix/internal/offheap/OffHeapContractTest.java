package io.kvprefix.internal.offheap;

import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.PrefixIndexContractTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract suite against the off-heap index: both read paths (the Java search and the native
 * kernel), worker slots 64, 256 and 1,024, and jump sizes 1, 2, 8 and 64 (every combination).
 */
@ParameterizedClass(name = "{0} reads, {1} slots, jump {2}")
@MethodSource("configs")
class OffHeapContractTest extends PrefixIndexContractTest {
    private final Implementation impl;
    private final int slots;
    private final int jump;

    OffHeapContractTest(Implementation impl, int slots, int jump) {
        this.impl = impl;
        this.slots = slots;
        this.jump = jump;
    }

    static List<Arguments> configs() {
        List<Arguments> out = new ArrayList<>();
        for (Implementation impl : new Implementation[] {Implementation.PORTABLE, Implementation.NATIVE}) {
            for (int slots : new int[] {64, 256, 1024}) {
                for (int jump : new int[] {1, 2, 8, 64}) {
                    out.add(Arguments.of(impl, slots, jump));
                }
            }
        }
        return out;
    }

    @Override
    protected PrefixIndex newIndex(IndexConfig config) {
        return PrefixIndex.offHeap(config);
    }

    @Override
    protected IndexConfig config() {
        return IndexConfig.builder()
                .maxWorkers(slots)
                .jumpSize(jump)
                .implementation(impl)
                .build();
    }
}
