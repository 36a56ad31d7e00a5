import { describe, expect, it } from "vitest";
import { CallerLoad, MAX_WAITING_SHARE } from "../../../src/policies/callerLoad.js";

/** The loads' clock, moved by {@link mayWaitAt}. */
let clock = 0;
const newLoad = (): CallerLoad => new CallerLoad(() => clock);
function mayWaitAt(load: CallerLoad, at: number, on: "circuit" | "paced" = "circuit"): boolean {
  clock = at;
  return load.mayWait(on);
}

/** Holds one partition wait open until `release()`. */
function holdWait(load: CallerLoad): { release: () => Promise<void> } {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const wait = load.waitOnPartition(1, () => gate.then(() => true), false);
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
  it("a bounded caller (16 workers, never more in flight) may hold at most a tenth of them waiting on open circuits", async () => {
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
    expect(MAX_WAITING_SHARE).toBe(0.1);
    expect(allowed).toEqual([true, false, false, false, false, false]); // 1 of 16 may wait
    await Promise.all(held.map((h) => h.release()));
    expect(mayWaitAt(load, 3_400)).toBe(true);
  });

  it("a bounded caller whose operations keep arriving as often as before may let more wait in a paced queue, not on a circuit", async () => {
    const load = newLoad();
    closedLoop(load, 16, 0, 3_000, 5);
    const held = [holdWait(load), holdWait(load), holdWait(load), holdWait(load)];
    // Arrivals in the last full quarter second as before: not starving (yet).
    closedLoop(load, 16, 3_000, 3_260, 5);
    expect(mayWaitAt(load, 3_260, "paced")).toBe(true);
    expect(mayWaitAt(load, 3_260, "circuit")).toBe(false);
    await Promise.all(held.map((h) => h.release()));
  });

  it("an open-loop caller, whose operations in flight grow while some wait, may keep waiting", async () => {
    const load = newLoad();
    // Before the trouble: about two operations busy at a time.
    load.started(0);
    load.started(1);
    load.ended();
    load.ended();
    // The partition fails: the five operations that open its circuit sleep in backoff.
    let open: () => void = () => {};
    const backoffGate = new Promise<void>((resolve) => (open = resolve));
    const backoffs = Array.from({ length: 5 }, (_, i) => {
      load.started(10 + i);
      return load.sleeping(() => backoffGate);
    });
    const held: Array<{ release: () => Promise<void> }> = [];
    const allowed: boolean[] = [];
    for (let i = 0; i < 30; i++) {
      load.started(100 + i * 25); // new operations keep arriving while earlier ones wait
      allowed.push(mayWaitAt(load, 100 + i * 25));
      held.push(holdWait(load));
    }
    expect(allowed.every(Boolean)).toBe(true);
    open();
    await Promise.all([...backoffs, ...held.map((h) => h.release())]);
  });

  it("backoff sleeps are not waits on a partition", async () => {
    const load = newLoad();
    closedLoop(load, 10, 0, 3_000, 5);
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const backoffs = Array.from({ length: 5 }, () => load.sleeping(() => gate));
    const first = mayWaitAt(load, 3_300);
    const h1 = holdWait(load);
    const second = mayWaitAt(load, 3_300);
    const h2 = holdWait(load);
    expect([first, second, mayWaitAt(load, 3_300)]).toEqual([true, false, false]); // 1 of 10
    open();
    await Promise.all([...backoffs, h1.release(), h2.release()]);
  });

  it("lets go of waiters beyond the share once a bounded caller starves, keeping the earliest", async () => {
    const load = newLoad();
    closedLoop(load, 16, 0, 3_000, 5);
    clock = 3_000;
    // Eight workers begin to wait in a paced queue at once, before the arrivals show it: all are let in.
    const admitted = Array.from({ length: 8 }, () => mayWaitAt(load, 3_000, "paced"));
    expect(admitted.every(Boolean)).toBe(true);
    // Each wait of 3 s passes in quarter-second slices, and nothing new starts meanwhile.
    const sleep = async (ms: number): Promise<boolean> => {
      clock += ms / 8; // eight waiters share the clock
      return true;
    };
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => load.waitOnPartition(3_000, sleep, true)));
    expect(outcomes.filter((o) => o === "waited")).toHaveLength(1); // a tenth of 16, the earliest
    expect(outcomes[0]).toBe("waited");
    expect(outcomes.slice(1).every((o) => o === "released")).toBe(true);
  });

  it("never lets go of a waiter that is not releasable (mode \"wait\")", async () => {
    const load = newLoad();
    closedLoop(load, 16, 0, 3_000, 5);
    const sleep = async (ms: number): Promise<boolean> => {
      clock += ms;
      return true;
    };
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => load.waitOnPartition(3_000, sleep, false)));
    expect(outcomes.every((o) => o === "waited")).toBe(true);
  });
});
