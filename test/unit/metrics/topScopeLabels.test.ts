import { describe, expect, it } from "vitest";
import { OTHER_PARTITION_LABEL, TopScopeLabels } from "../../../src/metrics/topScopeLabels.js";

/** Feeds throttles in order and returns the labels given. */
function feed(labels: TopScopeLabels, scopes: string[]): string[] {
  return scopes.map((scope) => labels.label(scope));
}

describe("TopScopeLabels", () => {
  it("gives a slot on the minThrottles-th throttle, while slots are free", () => {
    const labels = new TopScopeLabels(2, 3);
    expect(feed(labels, ["a", "a", "b", "a", "a", "b", "b", "c", "c", "c"])).toEqual(["other", "other", "other", "a", "a", "other", "b", "other", "other", "other"]);
    expect(labels.labelledScopes()).toEqual(["a", "b"]);
  });

  it("never gives more than topN slots, however many scopes", () => {
    const labels = new TopScopeLabels(3, 1);
    const given = new Set(feed(labels, Array.from({ length: 10_000 }, (_, i) => `scope-${i % 500}`)));
    expect(given.size).toBe(3 + 1);
    expect(given.has(OTHER_PARTITION_LABEL)).toBe(true);
  });

  it("a heavy hitter among a flood of one-off scopes still earns a slot (bounded candidate table)", () => {
    const labels = new TopScopeLabels(1, 5, 10);
    const scopes: string[] = [];
    for (let i = 0; i < 1000; i++) scopes.push(`once-${i}`, "hot");
    feed(labels, scopes);
    expect(labels.labelledScopes()).toEqual(["hot"]);
  });

  it("one-off scopes cannot promote themselves through eviction", () => {
    const labels = new TopScopeLabels(5, 2, 10);
    feed(labels, Array.from({ length: 1000 }, (_, i) => `once-${i}`));
    expect(labels.labelledScopes()).toEqual([]);
  });
});
