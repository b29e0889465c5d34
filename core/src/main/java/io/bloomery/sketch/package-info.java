/**
 * Sketches with RedisBloom semantics: {@link io.bloomery.sketch.CountMinSketch} (CMS.*),
 * {@link io.bloomery.sketch.TDigest} (TDIGEST.*, the merging t-digest of t-digest-c)
 * and {@link io.bloomery.sketch.TopK} (TOPK.*, HeavyKeeper). Hashing, sizing, saturation and merge
 * rules follow RedisBloom's C source, so the same commands give the same replies; TopK's random
 * decay draws from an injected {@link io.bloomery.sketch.DecayRandom}.
 */
package io.bloomery.sketch;
