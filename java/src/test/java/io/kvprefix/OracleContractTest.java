package io.kvprefix;

import io.kvprefix.testing.OracleIndex;

/** The contract suite against the oracle itself: the reference must pass what it is the reference for. */
class OracleContractTest extends PrefixIndexContractTest {
    @Override
    protected PrefixIndex newIndex(IndexConfig config) {
        return new OracleIndex(config);
    }

    @Override
    protected boolean enforcesMemoryBudget() {
        return false; // by design: see OracleIndex
    }
}
