/**
 * Approximate-membership filters. {@link io.bloomery.filter.MembershipFilter} is the contract ("absent"
 * is definite, "maybe" means go and check); {@link io.bloomery.filter.BloomFilter} is the classic filter.
 */
package io.bloomery.filter;
