package io.bloomery.filter;

import io.bloomery.testkit.FilterContract;

/** Runs the shared filter contract over every {@link io.bloomery.testkit.FilterFactory} constant. */
class FilterContractTest extends FilterContract {}
