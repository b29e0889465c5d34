/**
 * Pure sizing math: {@link io.bloomery.sizing.BloomMath#plan} turns (expected items, false-positive
 * rate) into bits, hashes and the projected rate when overfilled.
 */
package io.bloomery.sizing;
