import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { delayUntilWoken, WakeList } from "../../../src/timing/wake.js";

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
});

describe("delayUntilWoken", () => {
  it("resolves false when the delay runs out, and stops listening", async () => {
    const list = new WakeList();
    const done = delayUntilWoken(300, list, undefined);
    await vi.advanceTimersByTimeAsync(300);
    await expect(done).resolves.toBe(false);
    let woken = 0;
    list.listen(() => woken++);
    list.wakeAll();
    expect(woken).toBe(1); // only the new listener: the finished sleep had stopped listening
  });

  it("resolves true at once when woken, and clears its timer", async () => {
    const list = new WakeList();
    const done = delayUntilWoken(10_000, list, undefined);
    await vi.advanceTimersByTimeAsync(50);
    list.wakeAll();
    await expect(done).resolves.toBe(true);
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
    await expect(done).resolves.toBe(false);
  });
});
