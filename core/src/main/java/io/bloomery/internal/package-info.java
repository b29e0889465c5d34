/**
 * Helpers the kinds of core share (merge-compatibility checks, parallel batches, item encoding). Not part of the
 * API: {@code module-info} does not export this package.
 */
package io.bloomery.internal;
