import { describe, expect, it } from "vitest";
import { CallerLoad, MAX_WAITING_SHARE } from "../../../src/policies/callerLoad.js";

/** The loads' clock, moved by {@link mayWaitAt}. */
let clock = 0;
const newLoad = (): CallerLoad => new CallerLoad(() => clock);
function mayWaitAt(load: CallerLoad, at: number): boolean {
  clock = at;
  return load.mayWait();
}

/** Holds one partition wait open until `release()`. */
function holdWait(load: CallerLoad): { release: () => Promise<void> } {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const wait = load.sleeping(true, () => gate);
  return {
    release: async () => {
      open();
      await wait;
    },
  };
}

/** A closed loop of `workers`: from `from` to `to` ms, one operation ends and the next starts every `everyInMs`. */
function closedLoop(load: CallerLoad, workers: number, from: number, to: number, everyInMs: number): void {
  if (from === 0) for (let i = 0; i < workers; i++) load.started(0);
  for (let t = from; t < to; t += everyInMs) {
    load.ended();
    load.started(t);
  }
}

describe("CallerLoad", () => {
  it("a bounded caller (16 workers, never more in flight) that slows down may hold at most a fifth of them waiting", async () => {
    const load = newLoad();
    closedLoop(load, 16, 0, 3_000, 5);
    const allowed: boolean[] = [];
    const held: Array<{ release: () => Promise<void> }> = [];
    for (let i = 0; i < 6; i++) {
      // Each waiting worker starts no new operation: the arrivals of the last quarter second thin out.
      const ok = mayWaitAt(load, 3_300 + i);
      allowed.push(ok);
      if (ok) held.push(holdWait(load));
    }
    expect(MAX_WAITING_SHARE).toBe(0.2);
    expect(allowed).toEqual([true, true, true, false, false, false]); // 3 of 16 may wait
    await Promise.all(held.map((h) => h.release()));
    expect(mayWaitAt(load, 3_400)).toBe(true);
  });

  it("a bounded caller whose operations keep arriving as often as before may let more wait", async () => {
    const load = newLoad();
    closedLoop(load, 16, 0, 3_000, 5);
    const held = [holdWait(load), holdWait(load), holdWait(load), holdWait(load)];
    // Arrivals in the last full quarter second as before: not starving (yet).
    closedLoop(load, 16, 3_000, 3_260, 5);
    expect(mayWaitAt(load, 3_260)).toBe(true);
    await Promise.all(held.map((h) => h.release()));
  });

  it("an open-loop caller, whose operations in flight grow while some wait, may keep waiting", async () => {
    const load = newLoad();
    // Before the trouble: about two operations busy at a time.
    load.started(0);
    load.started(1);
    load.ended();
    load.ended();
    const held: Array<{ release: () => Promise<void> }> = [];
    const allowed: boolean[] = [];
    for (let i = 0; i < 30; i++) {
      load.started(100 + i * 25); // new operations keep arriving while earlier ones wait
      allowed.push(mayWaitAt(load, 100 + i * 25));
      held.push(holdWait(load));
    }
    expect(allowed.every(Boolean)).toBe(true);
    await Promise.all(held.map((h) => h.release()));
  });

  it("backoff sleeps are not waits on a partition", async () => {
    const load = newLoad();
    closedLoop(load, 10, 0, 3_000, 5);
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const backoffs = Array.from({ length: 5 }, () => load.sleeping(false, () => gate));
    const first = mayWaitAt(load, 3_300);
    const h1 = holdWait(load);
    const second = mayWaitAt(load, 3_300);
    const h2 = holdWait(load);
    expect([first, second, mayWaitAt(load, 3_300)]).toEqual([true, true, false]); // 2 of 10
    open();
    await Promise.all([...backoffs, h1.release(), h2.release()]);
  });
});
