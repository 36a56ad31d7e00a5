import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { METRIC_NAMES } from "../../../src/index.js";
import { DEFAULT_METRICS_PREFIX } from "../../../src/metrics/metricNames.js";
import { METRICS, OPERATION_OUTCOMES } from "../../../src/metrics/metricNames.js";
import { ORDINARY_ANSWERS } from "../../../src/metrics/operationOutcome.js";

const DOCS = join(dirname(fileURLToPath(import.meta.url)), "../../../docs");
const KNOWN = new Set(
  Object.values(METRICS).flatMap(({ name }) => {
    const full = DEFAULT_METRICS_PREFIX + name;
    return name.endsWith("_seconds") ? [full, `${full}_bucket`, `${full}_sum`, `${full}_count`] : [full];
  }),
);

/** Metric names a PromQL text mentions with our prefix. */
function metricNamesIn(text: string): string[] {
  return [...text.matchAll(/\bazure_storage_[a-z_]+/g)].map((match) => match[0]);
}

interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Array<{ id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; targets: Array<{ refId: string; expr: string }> }>;
  templating: { list: Array<{ name: string; type: string }> };
}

describe("docs/grafana-dashboard.json", () => {
  const dashboard = JSON.parse(readFileSync(join(DOCS, "grafana-dashboard.json"), "utf8")) as Dashboard;

  it("is a Grafana dashboard: uid, title, schemaVersion, unique panel ids, grid positions in 24 columns", () => {
    expect(dashboard.uid).toBe("azure-storage-resilience");
    expect(dashboard.title).toBeTruthy();
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
    }
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(["datasource", "service"]);
  });

  it("queries only metrics this package exports, and every family has a panel", () => {
    const used = new Set(dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => metricNamesIn(target.expr))));
    for (const name of used) expect(KNOWN, name).toContain(name);
    for (const name of Object.values(METRIC_NAMES)) {
      expect([...used].some((u) => u.startsWith(DEFAULT_METRICS_PREFIX + name)), name).toBe(true);
    }
  });
});

describe("docs/metrics.md and docs/prometheus/alerts.yml", () => {
  it("name only metrics this package exports, and metrics.md documents every one", () => {
    const markdown = readFileSync(join(DOCS, "metrics.md"), "utf8");
    const alerts = readFileSync(join(DOCS, "prometheus/alerts.yml"), "utf8");
    for (const name of [...metricNamesIn(markdown), ...metricNamesIn(alerts)]) expect(KNOWN, name).toContain(name);
    for (const name of Object.values(METRIC_NAMES)) expect(markdown).toContain(`| \`${DEFAULT_METRICS_PREFIX}${name}\` |`);
  });
});

describe("the outcome label in the dashboard, the alerts and docs/metrics.md", () => {
  const texts = {
    dashboard: readFileSync(join(DOCS, "grafana-dashboard.json"), "utf8").replaceAll('\\"', '"'),
    alerts: readFileSync(join(DOCS, "prometheus/alerts.yml"), "utf8"),
    metrics: readFileSync(join(DOCS, "metrics.md"), "utf8"),
  };
  const matchers = Object.entries(texts).flatMap(([where, text]) =>
    [...text.matchAll(/\boutcome\s*(=~|!~|!=|=)\s*"([^"]*)"/g)].map((m) => ({ where, op: m[1] as string, values: (m[2] as string).split("|") })),
  );

  it("names only outcomes that exist, and never by exclusion (a new outcome would fall into it unseen)", () => {
    expect(matchers.length).toBeGreaterThan(4);
    for (const { where, op, values } of matchers) {
      expect(["=", "=~"], where).toContain(op);
      for (const value of values) expect(OPERATION_OUTCOMES, `${where}: ${value}`).toContain(value);
    }
  });

  it("counts the same failures everywhere, and no answer among them", () => {
    const failures = matchers.filter((m) => m.values.includes("failure"));
    expect(failures.map((m) => m.where).sort()).toEqual(["alerts", "dashboard", "dashboard", "metrics"]);
    const answers = Object.keys(ORDINARY_ANSWERS);
    for (const { where, values } of failures) {
      expect(values, where).toEqual(["failure", "circuit_open", "partition_busy"]);
      for (const answer of answers) expect(values, where).not.toContain(answer);
    }
    // What they leave out is the answers, success and the caller's aborts.
    expect(OPERATION_OUTCOMES.filter((o) => !failures[0]?.values.includes(o)).sort()).toEqual([...answers, "success", "aborted"].sort());
  });
});
