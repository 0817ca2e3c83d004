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
 * The contract suite against the off-heap index: both read paths (the Java walk and the native
 * kernel) with worker slots 64, 256 and 1,024 (every combination). The jump size is not a dimension:
 * the chain index has no jump search (HeapPrefixIndexContractTest runs the heap index's).
 */
@ParameterizedClass(name = "{0} reads, {1} slots")
@MethodSource("configs")
class OffHeapContractTest extends PrefixIndexContractTest {
    private final Implementation impl;
    private final int slots;

    OffHeapContractTest(Implementation impl, int slots) {
        this.impl = impl;
        this.slots = slots;
    }

    static List<Arguments> configs() {
        List<Arguments> out = new ArrayList<>();
        for (Implementation impl : new Implementation[] {Implementation.PORTABLE, Implementation.NATIVE}) {
            for (int slots : new int[] {64, 256, 1024}) {
                out.add(Arguments.of(impl, slots));
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
        return IndexConfig.builder().maxWorkers(slots).implementation(impl).build();
    }
}
