import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Registry } from "prom-client";
import { createMetricsObserver, fixedBackoff, resilientRetryPolicy, startMetricsServer } from "../../src/index.js";
import type { MetricsServer } from "../../src/metrics/metricsServer.js";
import { skipWithoutPrometheus } from "../support/externalTool.js";
import { ok, request, scripted, serverBusy } from "../unit/metrics/metricsTestKit.js";

const DOCS = join(dirname(fileURLToPath(import.meta.url)), "../../docs");
const ALERT_RULES = join(DOCS, "prometheus/alerts.yml");
const HOST = "127.0.0.1";

let workDir: string;
let prometheus: ChildProcess | undefined;
let prometheusOutput = "";
let prometheusUrl: string;
let app: MetricsServer;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Polls `probe` until it returns a value, or fails with what Prometheus printed. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutInMs = 12_000): Promise<T> {
  const deadline = Date.now() + timeoutInMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (prometheus?.exitCode !== null && prometheus?.exitCode !== undefined) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not happen in time (last error: ${String(lastError)}). Prometheus output:\n${prometheusOutput.slice(-3000)}`);
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

async function instantQuery(promql: string): Promise<VectorSample[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as { status: string; data: { resultType: string; result: VectorSample[] } };
  if (body.status !== "success") throw new Error(`query failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** Skipped with a notice when Prometheus is missing; .ci/run sets REQUIRE_PROMETHEUS=1 so CI fails instead. */
const SKIP = skipWithoutPrometheus(["prometheus"], "prometheusServer.test.ts");

describe.skipIf(SKIP)("a real Prometheus scraping startMetricsServer", () => {
  beforeAll(async () => {
    // The app: one client's metrics after a scripted run (two 503 ServerBusy, then success; then a plain success).
    const registry = new Registry();
    const observer = createMetricsObserver("table", { registry });
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 1 }), observers: [observer] });
    await policy.sendRequest(request(), scripted(serverBusy, serverBusy, ok));
    await policy.sendRequest(request(), scripted(ok));
    app = await startMetricsServer({ port: 0, registry });

    workDir = await mkdtemp(join(tmpdir(), "prometheus-test-"));
    const config = [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "rule_files:",
      `  - ${JSON.stringify(ALERT_RULES)}`,
      "scrape_configs:",
      "  - job_name: storage-app",
      "    scrape_interval: 1s",
      "    static_configs:",
      `      - targets: ["${HOST}:${app.port}"]`,
    ].join("\n");
    await writeFile(join(workDir, "prometheus.yml"), config);
    const port = await freePort();
    prometheusUrl = `http://${HOST}:${port}`;
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${join(workDir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(workDir, "data")}`,
        `--web.listen-address=${HOST}:${port}`,
        "--log.level=warn",
      ],
      { cwd: workDir, stdio: ["ignore", "pipe", "pipe"] },
    );
    prometheus.stdout?.setEncoding("utf8").on("data", (chunk: string) => (prometheusOutput += chunk));
    prometheus.stderr?.setEncoding("utf8").on("data", (chunk: string) => (prometheusOutput += chunk));
    await eventually("Prometheus ready", async () => ((await fetch(`${prometheusUrl}/-/ready`)).ok ? true : undefined));
  }, 30_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus?.once("exit", resolve));
      prometheus.kill("SIGTERM");
      const killer = setTimeout(() => prometheus?.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    }
    await app?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it("finds the series with the expected values through /api/v1/query", async () => {
    const promql = 'azure_storage_operations_total{job="storage-app",service="table",operation="get_entity",outcome="success"}';
    const [sample] = await eventually("the series scraped", async () => {
      const result = await instantQuery(promql);
      return result.length > 0 ? result : undefined;
    });
    console.log(`PromQL ${promql} -> ${JSON.stringify(sample)}`);
    expect(sample?.value[1]).toBe("2");

    const byClass = await instantQuery('sum by (class) (azure_storage_attempts_total{job="storage-app",service="table"})');
    expect(Object.fromEntries(byClass.map((s) => [s.metric.class, s.value[1]]))).toEqual({ throttled: "2", success: "2" });
    const [throttles] = await instantQuery('azure_storage_throttles_total{job="storage-app",status="503",error_code="ServerBusy"}');
    expect(throttles?.value[1]).toBe("2");
    const [retries] = await instantQuery('azure_storage_retries_total{job="storage-app",reason="throttled"}');
    expect(retries?.value[1]).toBe("2");
    const [delays] = await instantQuery('azure_storage_retry_delay_seconds_count{job="storage-app",service="table"}');
    expect(delays?.value[1]).toBe("2");
    const [up] = await instantQuery('up{job="storage-app"}');
    expect(up?.value[1]).toBe("1");
  });

  it("loads the alert rules from docs/prometheus/alerts.yml", async () => {
    const response = await fetch(`${prometheusUrl}/api/v1/rules`);
    const body = (await response.json()) as { data: { groups: Array<{ rules: Array<{ name: string; health: string }> }> } };
    const rules = body.data.groups.flatMap((group) => group.rules);
    expect(rules.map((rule) => rule.name).sort()).toEqual(["AzureStorageOperationFailureRateHigh", "AzureStoragePartitionHot", "AzureStoragePartitionMoving", "AzureStorageRetriesExhausted", "AzureStorageThrottleRateHigh"]);
  });

  it("every PromQL example in docs/metrics.md and every dashboard panel query is valid PromQL", async () => {
    const markdown = await readFile(join(DOCS, "metrics.md"), "utf8");
    const examples = [...markdown.matchAll(/```promql\n([\s\S]*?)```/g)].map((match) => match[1]!.trim());
    const dashboard = JSON.parse(await readFile(join(DOCS, "grafana-dashboard.json"), "utf8")) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const panelQueries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    expect(examples.length).toBeGreaterThanOrEqual(6);
    expect(panelQueries.length).toBeGreaterThanOrEqual(14);
    for (const promql of [...examples, ...panelQueries]) {
      // Grafana's variables, as Grafana would fill them in.
      const query = promql.replaceAll("$__rate_interval", "1m").replaceAll("$service", ".*");
      const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await response.json()) as { status: string; error?: string };
      expect({ query, status: body.status, error: body.error }).toEqual({ query, status: "success", error: undefined });
    }
    const [ratio] = await instantQuery(
      'sum by (service) (azure_storage_retries_total{job="storage-app"}) / sum by (service) (azure_storage_operations_total{job="storage-app"})',
    );
    expect(ratio?.value[1]).toBe("1"); // 2 retries over 2 operations
  });
});
