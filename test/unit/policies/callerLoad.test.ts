import { describe, expect, it } from "vitest";
import { CallerLoad, MAX_WAITING_SHARE } from "../../../src/policies/callerLoad.js";

/** Holds `count` partition waits open until `release()` is called. */
function holdWaits(load: CallerLoad, count: number): { release: () => Promise<void> } {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const waits = Array.from({ length: count }, () => load.sleeping(true, () => gate));
  return {
    release: async () => {
      open();
      await Promise.all(waits);
    },
  };
}

describe("CallerLoad", () => {
  it("a bounded caller (16 workers, never more in flight) may hold at most a fifth of them waiting", async () => {
    const load = new CallerLoad();
    for (let i = 0; i < 16; i++) load.started(0);
    const allowed: boolean[] = [];
    const held: Array<{ release: () => Promise<void> }> = [];
    for (let i = 0; i < 6; i++) {
      allowed.push(load.mayWait());
      if (allowed.at(-1)) held.push(holdWaits(load, 1));
    }
    expect(MAX_WAITING_SHARE).toBe(0.2);
    expect(allowed).toEqual([true, true, true, false, false, false]); // 3 of 16 may wait
    await Promise.all(held.map((h) => h.release()));
    expect(load.mayWait()).toBe(true);
  });

  it("an open-loop caller, whose operations in flight grow while some wait, may keep waiting", async () => {
    const load = new CallerLoad();
    // Before the trouble: about two operations busy at a time.
    load.started(0);
    load.started(1);
    load.ended();
    load.ended();
    // The partition fails: the five operations that open its circuit sleep in backoff.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const backoffs = Array.from({ length: 5 }, (_, i) => {
      load.started(10 + i);
      return load.sleeping(false, () => gate);
    });
    const held: Array<{ release: () => Promise<void> }> = [];
    const allowed: boolean[] = [];
    for (let i = 0; i < 30; i++) {
      load.started(100 + i); // new operations keep arriving while earlier ones wait
      allowed.push(load.mayWait());
      held.push(holdWaits(load, 1));
    }
    expect(allowed.every(Boolean)).toBe(true);
    open();
    await Promise.all([...backoffs, ...held.map((h) => h.release())]);
  });

  it("backoff sleeps are not waits on a partition, but do not count as busy either", async () => {
    const load = new CallerLoad();
    for (let i = 0; i < 10; i++) load.started(0);
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const backoffs = Array.from({ length: 8 }, () => load.sleeping(false, () => gate));
    // 2 of 10 may wait on partitions whatever the backoffs.
    const first = load.mayWait();
    const h1 = holdWaits(load, 1);
    const second = load.mayWait();
    const h2 = holdWaits(load, 1);
    expect([first, second, load.mayWait()]).toEqual([true, true, false]);
    open();
    await Promise.all([...backoffs, h1.release(), h2.release()]);
  });

  it("forgets an old peak: a caller that was busy long ago and now grows is open again", async () => {
    const fresh = (longAgo: number): boolean => {
      const load = new CallerLoad();
      for (let i = 0; i < 16; i++) load.started(0);
      for (let i = 0; i < 16; i++) load.ended();
      load.started(longAgo);
      void load.sleeping(false, () => new Promise<void>(() => {})); // one operation in backoff
      load.started(longAgo + 1);
      return load.mayWait();
    };
    expect(fresh(25_000)).toBe(true); // two windows later: the peak of 16 is forgotten
    expect(fresh(5_000)).toBe(false); // within the window it still counts
  });
});
