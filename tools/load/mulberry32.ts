/**
 * A seeded pseudo-random generator returning floats in [0, 1), Tommy Ettinger's
 * mulberry32, for the demo's and the stress test's workloads. A copy of the simulator's
 * own (src/testing/simulator/mulberry32.ts): the tools import the package as users do,
 * and a PRNG is no part of what the testing entry offers users.
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
