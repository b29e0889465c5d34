/**
 * Helpers the kinds of core share (merge-compatibility checks, parallel batches, item encoding, the heap guard and
 * read-mostly lock of the scalable and cuckoo filters) and {@link io.bloomery.internal.KindAccess}, through which
 * the format code reaches each kind's persisted state. Not part of the API: {@code module-info} does not export this
 * package.
 */
package io.bloomery.internal;
