/**
 * A seeded pseudo-random generator returning floats in [0, 1), Tommy Ettinger's
 * mulberry32. Its own ten lines rather than a library: the simulator ships in the
 * package, and a 32-bit state is plenty for drawing fault probabilities reproducibly.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
