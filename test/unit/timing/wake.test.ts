import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { delayUntilWoken, WAKE_TURNS, WakeList, type WakeTurn } from "../../../src/timing/wake.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("WakeList", () => {
  it("wakes every waiter listening, once, and forgets them", () => {
    const list = new WakeList();
    const woken: string[] = [];
    list.listen(() => woken.push("a"));
    const stop = list.listen(() => woken.push("b"));
    list.listen(() => woken.push("c"));
    stop();
    list.wakeAll();
    list.wakeAll();
    expect(woken).toEqual(["a", "c"]);
  });

  it(`lets at most ${WAKE_TURNS} woken waiters out at once; each turn given back lets the next one go, in order`, () => {
    const list = new WakeList();
    const turns: WakeTurn[] = [];
    const woken: number[] = [];
    for (let i = 0; i < WAKE_TURNS + 3; i++) list.listen((turn) => (woken.push(i), turns.push(turn)));
    list.wakeAll();
    expect(woken).toEqual(Array.from({ length: WAKE_TURNS }, (_, i) => i));
    turns[0]!.done();
    turns[0]!.done(); // twice: nothing more
    expect(woken.slice(WAKE_TURNS)).toEqual([WAKE_TURNS]);
    turns[1]!.done();
    turns[2]!.done();
    expect(woken.slice(WAKE_TURNS)).toEqual([WAKE_TURNS, WAKE_TURNS + 1, WAKE_TURNS + 2]);
  });

  it("a queued waiter that stops listening (its own poll came first) is not woken later", () => {
    const list = new WakeList();
    const turns: WakeTurn[] = [];
    let late = 0;
    for (let i = 0; i < WAKE_TURNS; i++) list.listen((turn) => turns.push(turn));
    const stop = list.listen(() => late++);
    list.wakeAll();
    stop();
    for (const turn of turns) turn.done();
    expect(late).toBe(0);
  });
});

describe("delayUntilWoken", () => {
  it("resolves false when the delay runs out, and stops listening", async () => {
    const list = new WakeList();
    const done = delayUntilWoken(300, list, undefined);
    await vi.advanceTimersByTimeAsync(300);
    await expect(done).resolves.toBeUndefined();
    let woken = 0;
    list.listen(() => woken++);
    list.wakeAll();
    expect(woken).toBe(1); // only the new listener: the finished sleep had stopped listening
  });

  it("resolves with its turn at once when woken, and clears its timer", async () => {
    const list = new WakeList();
    const done = delayUntilWoken(10_000, list, undefined);
    await vi.advanceTimersByTimeAsync(50);
    list.wakeAll();
    await expect(done).resolves.toMatchObject({ done: expect.any(Function) });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with an AbortError when aborted, with no timer or listener left", async () => {
    const list = new WakeList();
    const controller = new AbortController();
    const done = delayUntilWoken(10_000, list, controller.signal);
    controller.abort();
    await expect(done).rejects.toMatchObject({ name: "AbortError", message: "The operation was aborted." });
    expect(vi.getTimerCount()).toBe(0);
    let woken = 0;
    list.listen(() => woken++);
    list.wakeAll();
    expect(woken).toBe(1);
  });

  it("without a wake source it is a plain delay", async () => {
    const done = delayUntilWoken(100, undefined, undefined);
    await vi.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toBeUndefined();
  });
});
