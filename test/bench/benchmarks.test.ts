import { describe, expect, it } from "vitest";
import {
  callerInstallOptions,
  OPEN_LOOP_CONFIGURATIONS,
  OPEN_LOOP_SCENARIOS,
  POOL_CONFIGURATIONS,
  POOL_FEEDS,
  TRAFFIC_SHAPES,
} from "../../bench/callerShapes.js";
import {
  COMEBACK_BUSY_CONFIGURATIONS,
  COMEBACK_BUSY_SHAPES,
  COMEBACK_CONFIGURATIONS,
  COMEBACK_FAULTS,
  COMEBACK_POOL_CONFIGURATIONS,
  comeBackSettings,
  FULL_COMEBACK_SETTINGS,
  type ComeBackFault,
} from "../../bench/comeBack.js";
import { familyChartFiles } from "../../bench/familyReport.js";
import { FAMILY_CONFIGURATIONS, familySettings, FULL_FAMILY_SETTINGS, type FamilyConfiguration } from "../../bench/faultFamily.js";
import { HOT_PARTITION_CONFIGURATION_IDS } from "../../bench/hotPartition.js";
import { CLOSED_LOOP_CONFIGURATION_IDS, CONFIGURATION_IDS, CONFIGURATION_LABELS } from "../../bench/tableConfigurations.js";
import { applySections, renderCharts, renderSections, type BenchResults } from "../../bench/report.js";
import { runBenchmarks } from "../../bench/runBenchmarks.js";
import { DEFAULT_PARTITION_BREAKER_OPTIONS } from "../../src/breaker/partitionBreakerOptions.js";

// Smoke only: every benchmark runs in a tiny configuration so the code cannot rot. No
// assertion here is about speed; the figures of a smoke run mean nothing.

const finite = (value: unknown) => typeof value === "number" && Number.isFinite(value);

function expectFigures(object: object, keys: readonly string[]): void {
  for (const key of keys) expect(finite((object as Record<string, unknown>)[key]), `${key} = ${String((object as Record<string, unknown>)[key])}`).toBe(true);
}

describe("come back: the command line's choices", () => {
  it("narrow the full settings, and a name or count it does not know is a RangeError naming it", () => {
    const narrowed = comeBackSettings(FULL_COMEBACK_SETTINGS, { seeds: 3, faults: ["throttle"], configurations: ["package", "sdk-default"], parts: ["faults"] });
    expect([narrowed.seeds, narrowed.faults, narrowed.configurations, narrowed.parts]).toEqual([3, ["throttle"], ["package", "sdk-default"], ["faults"]]);
    expect(narrowed.workload).toEqual(FULL_COMEBACK_SETTINGS.workload);
    expect(() => comeBackSettings(FULL_COMEBACK_SETTINGS, { faults: ["throttled" as ComeBackFault] })).toThrow(/faults takes throttle, frozen, refused, rebalancing; got "throttled"/);
    expect(() => comeBackSettings(FULL_COMEBACK_SETTINGS, { seeds: 0 })).toThrow(RangeError);
  });
});

describe("fault family: the command line's choices", () => {
  it("narrow the full settings, and a configuration or count it does not know is a RangeError naming it", () => {
    const narrowed = familySettings(FULL_FAMILY_SETTINGS, { seeds: 2, firstSeed: 5, configurations: ["package"] });
    expect([narrowed.seeds, narrowed.firstSeed, narrowed.configurations]).toEqual([2, 5, ["package"]]);
    expect(narrowed.workload).toEqual(FULL_FAMILY_SETTINGS.workload);
    expect(() => familySettings(FULL_FAMILY_SETTINGS, { configurations: ["sdk" as FamilyConfiguration] })).toThrow(/configs takes package, sdk-default, no-retry; got "sdk"/);
    expect(() => familySettings(FULL_FAMILY_SETTINGS, { firstSeed: 0 })).toThrow(RangeError);
  });
});

describe("benchmarks (smoke configuration)", () => {
  let results: BenchResults;

  it("run end to end against Azurite", async () => {
    results = await runBenchmarks({ smoke: true, command: "smoke test" });
    expect(results.smoke).toBe(true);
    expect(results.machine.cores).toBeGreaterThan(0);
    expect(results.machine.node).toMatch(/^v\d+/);
  }, 180_000);

  it("overhead: every variant of every comparison has a cost and a ratio", () => {
    const overhead = results.overhead!;
    expect(overhead.mockPipeline.variants.map((v) => v.id)).toEqual(["sdk", "all", "breaker", "metrics", "bare"]);
    expect(overhead.mockPipelineUrlRead.variants.map((v) => v.id)).toEqual(["sdk", "all", "breaker", "metrics", "bare"]);
    expect(overhead.mockTableClient.variants.map((v) => v.id)).toEqual(["sdk", "all", "bare", "all-no-tracing"]);
    expect(overhead.mockTableClientTraced?.variants.map((v) => v.id)).toEqual(["sdk", "all", "all-no-tracing"]);
    expect(overhead.azurite?.variants.map((v) => v.id)).toEqual(["sdk", "all", "sdk-again", "sdk-signal", "all-no-timeout"]);
    for (const comparison of [overhead.mockPipeline, overhead.mockPipelineUrlRead, overhead.mockTableClient, overhead.azurite!, overhead.mockTableClientTraced!]) {
      for (const variant of comparison.variants) expectFigures(variant, ["nsPerRequest", "ratio", "ratioP25", "ratioP75"]);
    }
  });

  it("rebalancing: every configuration, every figure", () => {
    const configs = results.rebalancing!.configurations;
    expect(configs.map((c) => c.id)).toEqual([...CONFIGURATION_IDS]);
    for (const c of configs) {
      expectFigures(c, ["operations", "couldSucceed", "succeeded", "attempts", "outageAttempts", "refusedAttempts", "p50InMs", "p99InMs", "healthyP99DuringOutageInMs"]);
      expect(c.operations).toBeGreaterThan(0);
      expect(c.attempts).toBeGreaterThan(0);
      expectFigures(c.failedButStored, ["insert", "upsert"]);
      expect(c.succeededButMissing).toBe(0);
      expect(c.series.attempts.length).toBeGreaterThan(0);
      expect(c.series.successes.length).toBe(c.series.attempts.length);
    }
  });

  it("many partitions: heap and circuit figures, the breaker within its bound", () => {
    const rows = results.manyPartitions!.rows;
    expect(rows.map((r) => r.id)).toEqual(["sdk-default", "package", "package-503", "cockatiel"]);
    for (const row of rows) expectFigures(row, ["scopes", "elapsedInMs", "heapBeforeInMb", "heapAfterInMb", "heapAfterReleaseInMb"]);
    const ours = rows.find((r) => r.id === "package")!;
    expect(ours.maxCircuits).toBe(0); // healthy partitions get no circuit
    expect(ours.metricSeries).toBeGreaterThan(0);
    const failing = rows.find((r) => r.id === "package-503")!;
    const { scopes } = results.manyPartitions!.settings;
    // Every partition's scope, and their one account's (scopes in the same registry, under the same bound).
    expect(failing.maxCircuits).toBe(Math.min(scopes + 1, DEFAULT_PARTITION_BREAKER_OPTIONS.maxScopes));
    expect(rows.find((r) => r.id === "cockatiel")!.circuits).toBe(results.manyPartitions!.settings.scopes);
  });

  it("closed loop: every configuration, the defaults next to both modes, has throughput figures", () => {
    const configs = results.closedLoop!.configurations;
    expect(configs.map((c) => c.id)).toEqual([...CLOSED_LOOP_CONFIGURATION_IDS]);
    for (const c of configs) {
      expectFigures(c, [
        "operations",
        "succeeded",
        "couldSucceed",
        "succeededOfCould",
        "healthyDoneDuring",
        "healthyDueDuring",
        "healthyPerSecondBefore",
        "healthyPerSecondDuring",
        "workerTimeOnOutagePartitions",
        "outageAttempts",
      ]);
      expect(c.succeededOfCould).toBeLessThanOrEqual(c.couldSucceed);
      expect(c.series.healthySuccesses.length).toBeGreaterThan(0);
    }
  });

  it("hot partition: issue 15's four configurations, every figure; the partition was throttled", () => {
    const { configurations, settings } = results.hotPartition!;
    expect(configurations.map((c) => c.id)).toEqual([...HOT_PARTITION_CONFIGURATION_IDS]);
    for (const c of configurations) {
      expectFigures(c, ["hotOperations", "hotSucceeded", "hotAttempts", "hotThrottled", "hotGoodputPerSecond", "hotGoodputShare", "hotP50InMs", "hotP99InMs", "lastHotDoneInMs", "coolOperations", "coolSucceeded", "coolAttempts", "coolP99InMs"]);
      // Half of the operations go to the hot partition.
      expect(c.hotOperations).toBe((settings.opsPerSecond * settings.durationInMs) / 2000);
      expect(c.hotAttempts).toBeGreaterThan(0);
      expect(c.hotSucceeded).toBeLessThanOrEqual(c.hotOperations);
      expect(c.series.hotAttempts.length).toBeGreaterThan(0);
    }
    // Sent twice its capacity with no retry (one attempt per operation), the partition answers some of it throttled.
    const noRetry = configurations.find((c) => c.id === "no-retry")!;
    expect(noRetry.hotAttempts).toBe(noRetry.hotOperations);
    expect(noRetry.hotThrottled).toBeGreaterThan(0);
  });

  it("queue consumer: a drain with no fault and one with p0 offline; every message processed, none lost", () => {
    const { runs, settings } = results.queueConsumer!;
    expect(runs.map((r) => r.id)).toEqual(["no-fault", "offline"]);
    for (const r of runs) {
      expectFigures(r, ["drainInMs", "processed", "sentBack", "sentBackBeforeSending", "leftInQueue", "lost"]);
      expect(r.processed).toBe(settings.messages);
      expect(r.leftInQueue).toBe(0);
      expect(r.lost).toBe(0);
    }
    expect(runs[0]!.sentBack).toBe(0);
  });

  it("blob downloads: both configurations per seed and size; with the package no download fails or mismatches", () => {
    const { runs, settings, totals } = results.blobDownloads!;
    expect(runs.length).toBe(settings.seeds.length * settings.sizes.length * 2);
    for (const r of runs) expectFigures(r, ["downloads", "failed", "mismatched", "cutAnswers", "getRequests", "elapsedInMs"]);
    expect(totals.resilient.failed).toBe(0);
    expect(totals.resilient.mismatched).toBe(0);
    expect(totals["sdk-default"].mismatched).toBe(0);
  });

  it("pacing: the account-throttle, split and many-clients rows, every figure", () => {
    const p = results.pacing!;
    expect(p.account.map((r) => r.id)).toEqual(["sdk-default", "package"]);
    for (const r of p.account) expectFigures(r, ["operations", "succeeded", "p99InMs", "p99PastLimitInMs", "lastDoneAfterEndInMs", "throttledAttempts"]);
    expect(p.splits.map((r) => r.id)).toEqual(["pacing-off", "package"]);
    // Every split partition serves its retry: all succeed, and the account pacer never engages on first throttles.
    for (const r of p.splits) expect(r.succeeded).toBe(p.settings.splits.partitions);
    expect(p.splits.find((r) => r.id === "package")!.accountPaced).toBe(false);
    expect(p.clients.map((r) => r.clients)).toEqual(p.settings.clients.counts);
    for (const r of p.clients) expectFigures(r, ["hotOperations", "hotSucceeded", "doneWithin11", "doneWithin15", "lastHotDoneInMs", "hotAttempts", "hotThrottled"]);
  });

  it("caller shapes: every scenario, traffic shape, pool and configuration, per seed; the figures add up", () => {
    const { openLoop, pools, settings, mapping } = results.callerShapes!;
    expect(openLoop).toHaveLength(OPEN_LOOP_SCENARIOS.length * TRAFFIC_SHAPES.length * OPEN_LOOP_CONFIGURATIONS.length);
    expect(pools).toHaveLength(settings.pools.sizes.length * POOL_FEEDS.length * POOL_CONFIGURATIONS.length);
    for (const row of openLoop) {
      expect(row.seeds).toHaveLength(settings.seeds);
      for (const f of row.seeds) {
        expectFigures(f, ["operations", "succeeded", "failedLocal", "failedOther", "attempts", "attemptsIntoFault"]);
        expect(f.operations).toBeGreaterThan(0);
        expect(f.succeeded + f.failedLocal + f.failedOther).toBe(f.operations);
        // Every operation is sent at least once, except those refused a connection or refused locally.
        if (row.scenario !== "refused") expect(f.attempts).toBeGreaterThanOrEqual(f.operations - f.failedLocal);
      }
    }
    // Each fault is wired: the simulator (or, for refused connections, the client) counted attempts into it in
    // some stream of the scenario. Not in every stream: a smoke fault lasts 200 ms, and on a starved machine
    // (four busy loops beside the suite) one stream's arrival loop fell behind and sent nothing in it.
    for (const scenario of ["frozen", "refused", "throttled"] as const) {
      expect(Math.max(...openLoop.filter((r) => r.scenario === scenario).map((row) => row.seeds[0]!.attemptsIntoFault))).toBeGreaterThan(0);
    }
    for (const row of pools) {
      expect(row.seeds).toHaveLength(settings.seeds);
      for (const f of row.seeds) {
        expectFigures(f, ["messages", "processed", "requeued", "requeuedBeforeSending", "failedLocal", "healthyDoneDuring", "healthyShareOfNoRetry", "outageAttempts", "lastDoneInMs"]);
        expect(f.messages).toBeGreaterThan(0);
        expect(f.processed).toBeLessThanOrEqual(f.messages);
        expect(f.requeuedBeforeSending).toBeLessThanOrEqual(f.requeued);
        // Every failed attempt sent its message back, and so did every partition that was not available.
        expect(Object.values(f.failures).reduce((a, b) => a + b, 0) + f.requeuedBeforeSending).toBeGreaterThanOrEqual(f.requeued);
        if (row.configuration === "no-retry") expect(f.failedLocal).toBe(0);
      }
    }
    expect(mapping.open).toBe(callerInstallOptions({ open: true }).declared);
  });

  it("come back: every fault and configuration, the pool and the busy partition; the figures add up", () => {
    const { runs, charts, pool, busy, settings } = results.comeBack!;
    expect(runs.map((r) => `${r.fault}/${r.configuration}`)).toEqual(COMEBACK_FAULTS.flatMap((f) => COMEBACK_CONFIGURATIONS.map((c) => `${f}/${c}`)));
    const operations = Math.floor((settings.workload.opsPerSecond * settings.workload.durationInMs) / 1000);
    for (const r of runs) {
      expectFigures(r, ["succeeded", "failedLocal", "failedOther", "inFault", "pastEndP50InMs", "pastEndP99InMs", "arrivedAfter", "arrivedAfterP50InMs", "arrivedAfterP99InMs", "attempts", "attemptsIntoFault"]);
      expect(r.operations).toBe(operations);
      expect(r.succeeded + r.failedLocal + r.failedOther).toBe(r.operations);
      expect(r.inFault).toBeGreaterThan(0);
      expect(r.arrivedAfter).toBeGreaterThan(0);
      // Clamped at 0: an operation that ended inside its fault counts 0, never less.
      expect(r.pastEndP50InMs).toBeGreaterThanOrEqual(0);
      expect(r.pastEndP99InMs).toBeGreaterThanOrEqual(r.pastEndP50InMs);
      // Every fault met every configuration: the proxy (or, refused, the client) counted attempts into it.
      expect(r.attemptsIntoFault).toBeGreaterThan(0);
      // No retry: one attempt per operation, and nothing the package could refuse locally.
      if (r.configuration === "no-retry") expect(r.failedLocal).toBe(0);
      if (r.configuration === "no-retry" && r.fault !== "refused") expect(r.attempts).toBe(r.operations);
    }
    expect(charts.map((c) => c.fault)).toEqual([...COMEBACK_FAULTS]);
    for (const chart of charts) expect(chart.series.map((s) => s.configuration)).toEqual(["package", "sdk-default"]);
    expect(pool.map((r) => r.configuration)).toEqual([...COMEBACK_POOL_CONFIGURATIONS]);
    for (const r of pool) {
      expectFigures(r, ["operations", "succeeded", "failedLocal", "notStarted", "healthyDoneDuring", "healthyShareOfNoRetry", "attemptsIntoFault"]);
      expect(r.succeeded).toBeLessThanOrEqual(r.operations - r.notStarted);
    }
    expect(pool.find((r) => r.configuration === "no-retry")!.healthyShareOfNoRetry).toBe(1);
    expect(busy.map((r) => `${r.shape}/${r.configuration}`)).toEqual(COMEBACK_BUSY_SHAPES.flatMap((shape) => COMEBACK_BUSY_CONFIGURATIONS.map((c) => `${shape}/${c}`)));
    const { upserts, rounds, tests } = settings.busy;
    for (const r of busy) {
      expectFigures(r, ["elapsedInMs", "ratioToSdk", "attempts", "busyAnswers", "calls", "spells", "spellCallsInMs", "afterSpellCalls", "afterSpellInMs", "slowestUnitInMs"]);
      // Every caller finishes: each round's paged query returns the upserted rows, each test's query its entity.
      expect(r.finished).toBe(true);
      expect(r.queried).toBe(r.shape === "rounds" ? upserts * rounds : tests);
      // Rounds: the upserts, then the pages and the pager's end (which asks nothing); tests: five calls each.
      expect(r.calls).toBe(r.shape === "rounds" ? rounds * (upserts + Math.ceil(upserts / settings.busy.pageSize) + 1) : 5 * tests);
      expect(r.attempts).toBeGreaterThanOrEqual(r.shape === "rounds" ? r.calls - rounds : r.calls);
      // A spell met is a call that met at least one busy answer.
      expect(r.spells).toBeLessThanOrEqual(r.busyAnswers);
      expect(r.spells + r.afterSpellCalls).toBeLessThanOrEqual(r.calls);
    }
  });

  it("fault family: every configuration in the seed, every fault counted; the figures add up and no acknowledged write is lost", () => {
    const { runs, draws, charts, settings } = results.family!;
    expect(draws.map((d) => d.seed)).toEqual([settings.firstSeed]);
    const draw = draws[0]!;
    expect(runs.map((r) => r.configuration)).toEqual([...FAMILY_CONFIGURATIONS]);
    const operations = Math.floor((settings.workload.opsPerSecond * settings.workload.durationInMs) / 1000);
    for (const r of runs) {
      expectFigures(r, ["succeeded", "failedLocal", "failedOther", "inFault", "attempts", "lostWrites", "failedButStored", "maxStartLagInMs", "loadAverage"]);
      expect(r.operations).toBe(operations);
      expect(r.succeeded + r.failedLocal + r.failedOther).toBe(r.operations);
      expect(r.lostWrites).toBe(0);
      expect(r.faults.map((f) => f.id)).toEqual(draw.faults.map((f) => f.id));
      expect(r.inFault).toBeGreaterThan(0);
      // Every fault met its stream: the proxy (or, refused, the client) counted attempts into it.
      expect(r.faults.reduce((sum, f) => sum + f.attempts, 0)).toBeGreaterThan(0);
      // The trickle got its answers, apart from the workload's figures.
      expect(r.trickle!.operations).toBeGreaterThan(0);
      if (r.configuration === "no-retry") expect(r.failedLocal).toBe(0);
    }
    // The smoke seed draws a refusal: no retry sends each operation arriving in it once, refused
    // (give or take the operations at its edges: the proxy's timer and the arrival loop's clock differ by a few ms).
    const refusal = draw.faults.find((f) => f.shape === "refused")!;
    const noRetry = runs.find((r) => r.configuration === "no-retry")!.faults.find((f) => f.id === refusal.id)!;
    expect(Math.abs(noRetry.attempts - noRetry.inFault)).toBeLessThanOrEqual(2);
    expect(charts.length).toBeGreaterThan(0);
    for (const chart of charts) expect(chart.series.map((s) => s.configuration)).toEqual(["package", "sdk-default"]);
  });

  it("the report renders every section and every chart from the results", () => {
    const sections = renderSections(JSON.parse(JSON.stringify(results)) as BenchResults);
    const doc = applySections("# Benchmarks\n\n<!-- bench:overhead:start -->\nold\n<!-- bench:overhead:end -->\n\nprose\n", sections);
    expect(doc).not.toContain("\nold\n");
    expect(doc).toContain("prose");
    for (const name of ["machine", "overhead", "rebalancing", "many-partitions", "closed-loop", "hot-partition", "queue-consumer", "pacing", "caller-shapes", "comeback", "family"]) {
      expect(doc.split(`<!-- bench:${name}:start -->`).length).toBe(2);
    }
    for (const id of CONFIGURATION_IDS) expect(sections.rebalancing).toContain(CONFIGURATION_LABELS[id]);
    const charts = renderCharts(results);
    const familyCharts = results.family!.charts.flatMap((chart) => Object.values(familyChartFiles(chart)));
    expect(Object.keys(charts).sort()).toEqual(["bench-closed-loop.svg", ...COMEBACK_FAULTS.map((f) => `bench-comeback-${f}.svg`), "bench-rebalancing.svg", ...familyCharts].sort());
    for (const svg of Object.values(charts)) expect(svg).toMatch(/^<svg[\s\S]*<polyline[\s\S]*<\/svg>\n$/);
  });
});
