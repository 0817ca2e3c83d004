package io.kvprefix;

import org.junit.jupiter.api.Nested;

/**
 * The contract suite against {@link PrefixIndex#heap}, once per jump size: 1 (no jumps), 2, 8 and 64
 * (jumps longer than most chains). The answer never depends on the jump size.
 */
class HeapPrefixIndexContractTest {

    @Nested
    class JumpSize1 extends PrefixIndexContractTest {
        @Override
        protected PrefixIndex newIndex(IndexConfig config) {
            return PrefixIndex.heap(config);
        }

        @Override
        protected IndexConfig config() {
            return IndexConfig.builder().jumpSize(1).build();
        }
    }

    @Nested
    class JumpSize2 extends PrefixIndexContractTest {
        @Override
        protected PrefixIndex newIndex(IndexConfig config) {
            return PrefixIndex.heap(config);
        }

        @Override
        protected IndexConfig config() {
            return IndexConfig.builder().jumpSize(2).build();
        }
    }

    @Nested
    class JumpSize8 extends PrefixIndexContractTest {
        @Override
        protected PrefixIndex newIndex(IndexConfig config) {
            return PrefixIndex.heap(config);
        }

        @Override
        protected IndexConfig config() {
            return IndexConfig.builder().jumpSize(8).build();
        }
    }

    @Nested
    class JumpSize64 extends PrefixIndexContractTest {
        @Override
        protected PrefixIndex newIndex(IndexConfig config) {
            return PrefixIndex.heap(config);
        }

        @Override
        protected IndexConfig config() {
            return IndexConfig.builder().jumpSize(64).build();
        }
    }
}
