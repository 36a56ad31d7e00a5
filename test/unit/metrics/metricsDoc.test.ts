import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { METRIC_NAMES, createMetricsObserver } from "../../../src/index.js";
import { DEFAULT_METRICS_PREFIX, METRICS } from "../../../src/metrics/metricNames.js";

// docs/metrics.md says its names and label sets are public API: every metric the package
// can register has a row there, with its type and labels in order.

const doc = readFileSync(new URL("../../../docs/metrics.md", import.meta.url), "utf8");

/** The "## The metrics" table: name -> { type, labels }. */
function documentedMetrics(): Map<string, { type: string; labels: string[] }> {
  const rows = new Map<string, { type: string; labels: string[] }>();
  for (const line of doc.split("\n")) {
    const match = /^\| `([a-z_:]+)` \| (counter|gauge|histogram) \| ([^|]*) \|/.exec(line);
    if (match === null) continue;
    const labels = [...(match[3] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1] ?? "");
    rows.set(match[1] ?? "", { type: match[2] ?? "", labels });
  }
  return rows;
}

describe("docs/metrics.md", () => {
  it("names every metric name constant", () => {
    const names = Object.values(METRICS).map((metric) => metric.name);
    const documented = documentedMetrics();
    for (const name of names) expect([...documented.keys()], `${DEFAULT_METRICS_PREFIX}${name} is not in the table`).toContain(DEFAULT_METRICS_PREFIX + name);
  });

  it("gives every registered family its type and labels, in order, and documents nothing that does not exist", () => {
    const registry = new Registry();
    createMetricsObserver("table", { registry, partitionLabel: true });
    const registered = registry.getMetricsAsArray() as unknown as Array<{ name: string; type: string; labelNames: string[] }>;
    const documented = documentedMetrics();
    for (const family of registered) {
      expect(documented.get(family.name), `${family.name} is not documented`).toEqual({ type: family.type, labels: family.labelNames });
    }
    expect([...documented.keys()].sort()).toEqual(registered.map((f) => f.name).sort());
  });

  it("labels match each metric's labels", () => {
    const documented = documentedMetrics();
    for (const [key, name] of Object.entries(METRIC_NAMES)) {
      expect(documented.get(DEFAULT_METRICS_PREFIX + name)?.labels).toEqual(METRICS[key as keyof typeof METRIC_NAMES].labels);
    }
  });
});
