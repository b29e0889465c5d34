/** Redis Cluster's key slots: {@link io.bloomery.cluster.slot.HashSlot} maps a key to one of 16,384 slots. */
package io.bloomery.cluster.slot;
