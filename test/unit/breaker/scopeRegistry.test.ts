import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ScopeRegistry } from "../../../src/breaker/scopeRegistry.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function registry(maxEntries: number, idleTtlInMs: number, isRetirable: (value: string) => boolean = () => false) {
  const evicted: string[] = [];
  const r = new ScopeRegistry<string>(maxEntries, idleTtlInMs, isRetirable, (value) => evicted.push(value));
  return { r, evicted, values: () => [...r.values()] };
}
const now = () => performance.now();

describe("ScopeRegistry", () => {
  it("forgets the least recently used beyond maxEntries, and says so; touch refreshes, peek does not", () => {
    const { r, evicted, values } = registry(3, Infinity);
    for (const k of ["a", "b", "c"]) r.add(k, k, now());
    expect(r.touch("a", now())).toBe("a");
    expect(r.peek("b")).toBe("b");
    r.add("d", "d", now());
    expect(evicted).toEqual(["b"]);
    expect(values()).toEqual(["c", "a", "d"]);
    expect(r.size).toBe(3);
    // No TTL: no timer.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("adding a key again replaces its value, as the most recently used", () => {
    const { r, values } = registry(3, Infinity);
    r.add("a", "1", now());
    r.add("b", "2", now());
    r.add("a", "3", now());
    expect(values()).toEqual(["2", "3"]);
  });

  it("sweeps only entries idle for the TTL, on its own timer, which stops when empty", () => {
    const { r, evicted } = registry(100, 1_000);
    r.add("old", "old", now());
    vi.advanceTimersByTime(600);
    r.add("new", "new", now());
    vi.advanceTimersByTime(500); // sweep at 1000 ms: old idle 1000, new 400
    expect(evicted).toEqual(["old"]);
    vi.advanceTimersByTime(1_000);
    expect(evicted).toEqual(["old", "new"]);
    expect(r.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a touched entry survives the sweep; a retirable one goes at the next, however recently used", () => {
    const retired = new Set<string>();
    const { r, values } = registry(100, 1_000, (value) => retired.has(value));
    r.add("a", "a", now());
    r.add("b", "b", now());
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(400);
      r.touch("a", now());
      r.touch("b", now());
      if (i === 5) retired.add("b");
    }
    expect(values()).toEqual(["a"]);
  });

  it("clear forgets everything and stops the timer", () => {
    const { r } = registry(100, 1_000);
    r.add("a", "1", now());
    r.add("b", "2", now());
    r.clear();
    expect(r.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
