/**
 * Hash protocols: named, versioned, frozen functions from item bytes to bit positions. Look one up
 * with {@link io.bloomery.hash.Protocols}; definitions are in {@code docs/PROTOCOLS.md}.
 */
package io.bloomery.hash;
