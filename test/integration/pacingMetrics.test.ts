import { afterEach, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { installResilience, type ResilienceHandle } from "../../src/index.js";
import { DEMAND_SHARE } from "../../src/flow/scopeController.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";
import { sampleValue, samplesOf, sumOf } from "../unit/metrics/metricsTestKit.js";

// The pacing metrics on a real hot partition: a real TableClient, real Azurite, the simulator
// holding one partition to 50 requests/s (503 ServerBusy beyond) while it receives 100/s.
// An operator scraping during the run sees the partition paced (hot), not open (moving).

const env = withTableSimulator({ seed: 16 });
const DURATION_IN_MS = 2_000;
const HOT_OPS_PER_SECOND = 100;
const HOT_CAPACITY_PER_SECOND = 50;
const COOL_OPS_PER_SECOND = 40;
const COOL = ["cool0", "cool1", "cool2", "cool3"];
const SCRAPE_EVERY_IN_MS = 200;

let handle: ResilienceHandle | undefined;
afterEach(() => {
  handle?.dispose();
  env.simulator.clearFaults();
});

interface Scrape {
  paced: number | undefined;
  open: number | undefined;
  hotRate: number | undefined;
  otherRates: number;
}

describe("pacing metrics on a hot partition", () => {
  it("paced_partitions shows the hot partition (and no open circuit), pacing_delay_seconds its waits, partition_send_rate its rate", async () => {
    const table = uniqueTableName("pacedmetrics");
    await env.directTableClient(table).createTable();
    const client = env.tableClient(table);
    const registry = new Registry();
    handle = installResilience(client, { metrics: { registry, partitionLabel: { topN: 3, minThrottles: 1 } } });
    env.simulator.addFault({ name: "hot", kind: "throttle", match: { partition: "hot" }, ratePerSecond: HOT_CAPACITY_PER_SECOND });
    env.simulator.resetRecords();
    const hotScope = new RegExp(`^table\\|[^|]+\\|${table}\\|hot$`);

    // Scrapes while the load runs, as Prometheus would.
    const scrapes: Scrape[] = [];
    const scrape = async (): Promise<void> => {
      const rates = await samplesOf(registry, "azure_storage_partition_send_rate");
      scrapes.push({
        paced: await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" }),
        open: await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "open" }),
        hotRate: rates.find((s) => hotScope.test(String(s.labels.partition)))?.value,
        otherRates: rates.filter((s) => !hotScope.test(String(s.labels.partition))).length,
      });
    };
    const scraper = setInterval(() => void scrape(), SCRAPE_EVERY_IN_MS);

    const operations: Array<Promise<boolean>> = [];
    const schedule = (partition: string, atInMs: number, n: number): void => {
      operations.push(
        new Promise((resolve) => setTimeout(resolve, atInMs)).then(() =>
          client.upsertEntity({ partitionKey: partition, rowKey: `r${n}`, n }).then(
            () => true,
            () => false,
          ),
        ),
      );
    };
    const hotOps = (HOT_OPS_PER_SECOND * DURATION_IN_MS) / 1000;
    const coolOps = (COOL_OPS_PER_SECOND * DURATION_IN_MS) / 1000;
    // The hot partition's operations come in bunches of 10 every 100 ms: once it is paced, some must wait for
    // their turns however late the machine runs the timers (spread evenly, a starved machine's lagging
    // arrivals each found their turn due, and none waited).
    for (let i = 0; i < hotOps; i++) schedule("hot", Math.floor(i / 10) * 100, i);
    for (let i = 0; i < coolOps; i++) schedule(COOL[i % COOL.length] as string, (i * 1000) / COOL_OPS_PER_SECOND, i);
    const results = await Promise.all(operations);
    clearInterval(scraper);
    await scrape();

    const upsert = { service: "table", operation: "upsert_entity" };
    const figures = {
      succeeded: results.filter(Boolean).length,
      operations: results.length,
      attempts: await sumOf(registry, "azure_storage_attempts_total", upsert),
      throttled: await sumOf(registry, "azure_storage_attempts_total", { ...upsert, class: "throttled" }),
      pacedAttempts: await sampleValue(registry, "azure_storage_pacing_delay_seconds_count", upsert),
      pacedWaitSeconds: await sampleValue(registry, "azure_storage_pacing_delay_seconds_sum", upsert),
      partitionBusy: await sampleValue(registry, "azure_storage_operations_total", { ...upsert, outcome: "partition_busy" }),
      scrapes: scrapes.length,
      maxPaced: Math.max(...scrapes.map((s) => s.paced ?? 0)),
      maxOpen: Math.max(...scrapes.map((s) => s.open ?? 0)),
      hotRates: scrapes.map((s) => s.hotRate).filter((rate) => rate !== undefined).map((rate) => Math.round(rate)),
    };
    console.log("pacing metrics on a hot partition:", JSON.stringify(figures));

    // Hot, not moving: exactly one partition paced at some scrape, no circuit ever open.
    expect(figures.maxPaced).toBe(1);
    expect(figures.maxOpen).toBe(0);
    // The cool partitions were never paced: no rate series but the hot partition's.
    expect(scrapes.every((s) => s.otherRates === 0)).toBe(true);
    // Its rate was read while paced: at least the floor, and below what its callers ask over DEMAND_SHARE
    // (the model lets go of a limit past that: docs/flow-control.md). Regrowing past the capacity it learnt,
    // the rate may pass what was offered (213/s once, at load 12).
    expect(figures.hotRates.length).toBeGreaterThan(0);
    for (const rate of figures.hotRates) {
      expect(rate).toBeGreaterThanOrEqual(1);
      expect(rate).toBeLessThan(HOT_OPS_PER_SECOND / DEMAND_SHARE);
    }
    // Attempts waited for their slots, and only paced ones were observed: at most one per attempt to the hot partition.
    expect(figures.pacedAttempts).toBeGreaterThan(0);
    expect(figures.pacedWaitSeconds).toBeGreaterThan(0);
    expect(figures.pacedAttempts).toBeLessThanOrEqual(env.simulator.count({ partition: "hot" }));
    // The histogram agrees with the operations: every one accounted for by outcome.
    expect(await sumOf(registry, "azure_storage_operations_total", upsert)).toBe(figures.operations);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...upsert, outcome: "success" })).toBe(figures.succeeded);
  });
});
