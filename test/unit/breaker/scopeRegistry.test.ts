import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScopeRegistry } from "../../../src/breaker/scopeRegistry.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function registry(maxEntries: number, idleTtlInMs = Infinity) {
  const evicted: string[] = [];
  const r = createScopeRegistry<string>({ maxEntries, idleTtlInMs, onEvict: (key) => evicted.push(key) });
  return { r, evicted };
}

describe("createScopeRegistry", () => {
  it("evicts the least recently used beyond maxEntries; touch refreshes, peek does not", () => {
    const { r, evicted } = registry(3);
    for (const k of ["a", "b", "c"]) r.add(k, k.toUpperCase());
    expect(r.touch("a")).toBe("A");
    expect(r.peek("b")).toBe("B");
    r.add("d", "D");
    expect(evicted).toEqual(["b"]);
    r.add("e", "E");
    expect(evicted).toEqual(["b", "c"]);
    expect([...r.values()]).toEqual(["A", "D", "E"]);
    expect(r.size()).toBe(3);
  });

  it("replacing a key evicts the old value", () => {
    const { r, evicted } = registry(3);
    r.add("a", "1");
    r.add("a", "2");
    expect(evicted).toEqual(["a"]);
    expect(r.peek("a")).toBe("2");
  });

  it("sweeps only entries idle for the TTL, on its own timer, which stops when empty", () => {
    const { r, evicted } = registry(100, 1_000);
    r.add("old", "1");
    vi.advanceTimersByTime(600);
    r.add("new", "2");
    vi.advanceTimersByTime(500); // sweep at 1000 ms: old idle 1000, new 400
    expect(evicted).toEqual(["old"]);
    vi.advanceTimersByTime(1_000);
    expect(evicted).toEqual(["old", "new"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a touched entry survives the sweep", () => {
    const { r, evicted } = registry(100, 1_000);
    r.add("a", "1");
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(400);
      r.touch("a");
    }
    expect(evicted).toEqual([]);
  });

  it("clear evicts everything and stops the timer", () => {
    const { r, evicted } = registry(100, 1_000);
    r.add("a", "1");
    r.add("b", "2");
    r.clear();
    expect(evicted).toEqual(["a", "b"]);
    expect(r.size()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
