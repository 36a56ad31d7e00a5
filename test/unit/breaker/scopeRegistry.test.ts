import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ScopeRegistry } from "../../../src/breaker/scopeRegistry.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const keys = (r: ScopeRegistry<string>) => [...r.values()];

describe("ScopeRegistry", () => {
  it("forgets the least recently used beyond maxEntries; touch refreshes, peek does not", () => {
    const r = new ScopeRegistry<string>(3, Infinity, () => false);
    for (const k of ["a", "b", "c"]) r.add(k, k);
    expect(r.touch("a")).toBe("a");
    expect(r.peek("b")).toBe("b");
    r.add("d", "d");
    expect(keys(r)).toEqual(["c", "a", "d"]);
    r.add("e", "e");
    expect(keys(r)).toEqual(["a", "d", "e"]);
    expect(r.size).toBe(3);
    // No TTL: no timer.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("adding a key again replaces its value, as the most recently used", () => {
    const r = new ScopeRegistry<string>(3, Infinity, () => false);
    r.add("a", "1");
    r.add("b", "2");
    r.add("a", "3");
    expect(keys(r)).toEqual(["2", "3"]);
  });

  it("sweeps only entries idle for the TTL, on its own timer, which stops when empty", () => {
    const r = new ScopeRegistry<string>(100, 1_000, () => false);
    r.add("old", "old");
    vi.advanceTimersByTime(600);
    r.add("new", "new");
    vi.advanceTimersByTime(500); // sweep at 1000 ms: old idle 1000, new 400
    expect(keys(r)).toEqual(["new"]);
    vi.advanceTimersByTime(1_000);
    expect(r.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a touched entry survives the sweep; a retirable one goes at the next, however recently used", () => {
    const retired = new Set<string>();
    const r = new ScopeRegistry<string>(100, 1_000, (value) => retired.has(value));
    r.add("a", "a");
    r.add("b", "b");
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(400);
      r.touch("a");
      r.touch("b");
      if (i === 5) retired.add("b");
    }
    expect(keys(r)).toEqual(["a"]);
  });

  it("clear forgets everything and stops the timer", () => {
    const r = new ScopeRegistry<string>(100, 1_000, () => false);
    r.add("a", "1");
    r.add("b", "2");
    r.clear();
    expect(r.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
