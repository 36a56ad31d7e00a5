import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Registry } from "prom-client";
import { createMetricsObserver, fixedBackoff, resilientRetryPolicy } from "../../src/index.js";
import { type AttemptGate } from "../../src/breaker/attemptGate.js";
import { type PacedScopeSource } from "../../src/metrics/pacingMetrics.js";
import type { CircuitStateSource, CircuitTransition } from "../../src/breaker/partitionBreakerInterface.js";
import { skipWithoutPrometheus } from "../support/externalTool.js";
import { internal, notFound, ok, reply, request, scripted, serverBusy, timedOut, type Step } from "../unit/metrics/metricsTestKit.js";
import { asGateOption, gateOf, waitOf } from "../support/scriptedGate.js";

const RULES_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../docs/prometheus");

/** Skipped with a notice when promtool is missing; .ci/run sets REQUIRE_PROMETHEUS=1 so CI fails instead. */
const SKIP = skipWithoutPrometheus(["promtool"], "prometheusPromtool.test.ts");

function promtool(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync("promtool", args, { input, encoding: "utf8", cwd: RULES_DIR, timeout: 30_000 });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A registry holding every family with real values, from real policy runs. */
async function populatedRegistry(): Promise<Registry> {
  const registry = new Registry();
  const table = createMetricsObserver("table", { registry, partitionLabel: { topN: 2, minThrottles: 1 } });
  const blob = createMetricsObserver("blob", { registry });
  const transitions = new Set<(t: CircuitTransition) => void>();
  const circuits: CircuitStateSource & PacedScopeSource = {
    stateCounts: () => ({ closed: 4, open: 1, half_open: 0 }),
    pacedScopes: () => [{ scope: "table|acct|orders|p1", ratePerSecond: 42.5 }, { scope: "table|acct|orders|p2", ratePerSecond: 3 }],
    onTransition: (listener) => {
      transitions.add(listener);
      return () => transitions.delete(listener);
    },
  };
  table.observeCircuits(circuits);
  for (const listener of transitions) listener({ service: "table", scope: "table|acct|orders|p1", from: "closed", to: "open" });

  const runs: Array<[typeof table, Step[], string?]> = [
    [table, [serverBusy, serverBusy, ok]],
    [table, [(req) => reply(req, 429, { "x-ms-error-code": "TooManyRequests" }), ok]],
    [table, [timedOut, notFound]],
    [table, [internal, internal]],
    [blob, [serverBusy, ok], "https://acct.blob.core.windows.net/photos/cat.jpg"],
  ];
  for (const [observer, steps, url] of runs) {
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 1, delayInMs: 1 }), observers: [observer] });
    await policy.sendRequest(request(url ? { url } : {}), scripted(...steps)).catch(() => undefined);
  }
  const gate: AttemptGate = {
    admit: () => ({ decision: "refuse", reason: "circuit-open", scope: "table|acct|orders|p1", retryAfterInMs: 100 }),
    record: () => undefined,
  };
  await resilientRetryPolicy({ observers: [table], gate: asGateOption(gate), caller: { failFast: true } }).sendRequest(request(), scripted()).catch(() => undefined);
  // A paced attempt (waits 20 ms for its slot), and a paced refusal (outcome partition_busy).
  const paced = gateOf(waitOf("pacing", 20));
  await resilientRetryPolicy({ observers: [table], gate: asGateOption(paced) }).sendRequest(request(), scripted(ok));
  const busy: AttemptGate = { admit: () => ({ decision: "refuse", reason: "paced", scope: "table|acct|orders|p1", retryAfterInMs: 900 }), record: () => undefined };
  await resilientRetryPolicy({ observers: [table], gate: asGateOption(busy) }).sendRequest(request(), scripted()).catch(() => undefined);
  return registry;
}

describe.skipIf(SKIP)("promtool", () => {
  it("check metrics: the real exposition output passes with no warnings", async () => {
    const exposition = await (await populatedRegistry()).metrics();
    for (const family of ["operations_total", "attempts_total", "retries_total", "throttles_total", "retry_delay_seconds_bucket",
      "operation_duration_seconds_bucket", "retries_exhausted_total", "circuit_breakers", "circuit_transitions_total",
      "circuit_rejections_total", "partition_throttles_total", "pacing_delay_seconds_bucket", "paced_partitions",
      "partition_send_rate"]) {
      expect(exposition).toMatch(new RegExp(`^azure_storage_${family}\\{`, "m"));
    }
    const result = promtool(["check", "metrics"], exposition);
    console.log(`promtool check metrics: exit ${result.status}, output ${JSON.stringify(result.stdout + result.stderr)}`);
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("check metrics does flag a bad exposition (so the check above can fail)", () => {
    const bad = "# HELP requests Requests.\n# TYPE requests counter\nrequests 1\n";
    const result = promtool(["check", "metrics"], bad);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/counter metrics should have "_total" suffix/);
  });

  it("check rules: docs/prometheus/alerts.yml", () => {
    const result = promtool(["check", "rules", "alerts.yml"]);
    console.log(`promtool check rules: ${result.stdout.trim()}`);
    expect(result.stdout).toContain("SUCCESS: 5 rules found");
    expect(result.status).toBe(0);
  });

  it("test rules: docs/prometheus/alerts.test.yml", () => {
    const result = promtool(["test", "rules", "alerts.test.yml"]);
    console.log(`promtool test rules: ${result.stdout.trim()}`);
    expect(result.stdout + result.stderr).toContain("SUCCESS");
    expect(result.status).toBe(0);
  });
});
