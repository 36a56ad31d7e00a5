// The fault family's part of docs/benchmarks.md (section 10) and its charts, from the results.
import { panelChart, type Band } from "../tools/report/panelChart.js";
import { round } from "../tools/report/stats.js";
import { COMEBACK_LABELS } from "./comeBack.js";
import { describeFault, FAMILY_SHAPE_LABELS, FAMILY_SHAPES, FAULT_FAMILY, type FamilyFault, type FamilyShape } from "./familyDraw.js";
import { familyCells, familyWorstCases, type FamilyChart, type FamilyResult, type FamilyRun } from "./familyFigures.js";
import type { FamilyConfiguration } from "./faultFamily.js";
import { span } from "./pacing.js";

/** The fault family's charts, relative to docs/: latency by arrival time, and attempts into the faults, of one worst case. */
export function familyChartFiles(chart: Pick<FamilyChart, "kind">): { latency: string; attempts: string } {
  return { latency: `bench-family-worst-${chart.kind}.svg`, attempts: `bench-family-worst-${chart.kind}-into-faults.svg` };
}

const seconds = (ms: number): string => `${round(ms / 1000, 2)} s`;
const known = (values: ReadonlyArray<number | null>): number[] => values.filter((v): v is number => v !== null);
const sec = (values: ReadonlyArray<number | null>): string => span(known(values).map((v) => v / 1000), 2);
const cell = (value: number | null | undefined, digits = 0): string => (value === null || value === undefined ? "–" : String(round(value, digits)));

export function familySection(f: FamilyResult): string {
  const s = f.settings;
  const w = s.workload;
  const t = s.timing;
  const last = s.firstSeed + s.seeds - 1;
  const byConfiguration = s.configurations.map((c) => f.runs.filter((r) => r.configuration === c)).filter((runs) => runs.length > 0);
  const p = FAULT_FAMILY;
  const parts = [
    `Seeds ${s.firstSeed}-${last} (${s.seeds}) on commit ${f.source.commit}${f.source.uncommittedSourceFiles > 0 ? ` plus uncommitted changes in ${f.source.uncommittedSourceFiles} file(s) under src/` : ""}, ` +
      `from ${f.startedAt}; configurations one after another. Run in ${Math.round(f.elapsedInMs / 1000)} s; the machine's 1-min load average was ` +
      `${f.loadAverage.start} at the start and ${f.loadAverage.end} at the end (each run's in the per-seed table, with how far its arrivals fell behind).`,
    "",
    `**Set-up** (bench/faultFamily.ts): comeBack's open loop. A real \`TableClient\` → the package's fault proxy (\`startRebalancingSimulator\`) → Azurite; ` +
      `${w.opsPerSecond} operations/s for ${seconds(w.durationInMs)} (${Math.floor((w.opsPerSecond * w.durationInMs) / 1000)} operations, comeBack's arrivals for the same seed, each its own caller), ` +
      `uniform over ${w.partitions} partitions, half \`createEntity\` (unique row keys), half \`upsertEntity\`, a ${w.payloadBytes}-byte payload that carries the operation's index; ` +
      `of the workload's requests no fault answers, ${w.resetBeforeProbability * 100} % have their connection reset before they are forwarded and ${w.resetAfterProbability * 100} % after the store applied them. ` +
      `The package's defaults (\`installResilience(client)\`), the SDK's default retry and no retry, each on a fresh table behind a fresh proxy.`,
    "",
    `**The family** (bench/familyDraw.ts, one seed replays its draw): per seed, a primary fault whose shape cycles with the seed (seed 1 the first shape below, seed 9 the first again), ` +
      `then 0, 1 or 2 more (probabilities ${p.extraFaultProbabilities.join(", ")}), each of a shape not yet drawn for the seed, those equally likely. ` +
      `Each lasts ${seconds(t.lengthInMs.min)}-${seconds(t.lengthInMs.max)} and starts between ${seconds(t.earliestStartInMs)} and ${seconds(t.latestEndInMs)} less its length (uniform), so faults overlap as the draws fall. The shapes:`,
    "",
    `- ${FAMILY_SHAPE_LABELS["throttle-all"]}; ${FAMILY_SHAPE_LABELS["throttle-share"]} (${p.throttleShare.min * 100}-${p.throttleShare.max * 100} %, the rest served); ` +
      `${FAMILY_SHAPE_LABELS["throttle-rate"]} (${p.throttleRatePerSecond.min}-${p.throttleRatePerSecond.max}/s, a token bucket over the account holding a second's worth);`,
    `- ${FAMILY_SHAPE_LABELS["partitions-offline"]} and ${FAMILY_SHAPE_LABELS["partitions-timing-out"]} (${seconds(t.timeoutDelayInMs.min)}-${seconds(t.timeoutDelayInMs.max)}): one or two partitions (even odds);`,
    `- ${FAMILY_SHAPE_LABELS.frozen} (held, then reset when it ends); ${FAMILY_SHAPE_LABELS.refused}; ${FAMILY_SHAPE_LABELS.resetting} (before forwarding).`,
    "",
    `Where faults overlap, the proxy answers with the first drawn: the primary fault answers every request in its window and scope, the others what it leaves ` +
      `(a rate throttle's served requests, other partitions); a refusal acts on connections, before all, and is the only fault that can hide part of the primary. ` +
      `**The trickle** (seeds 1-${p.trickleBlockSeeds}, ${2 * p.trickleBlockSeeds + 1}-${3 * p.trickleBlockSeeds}, …; off in ${p.trickleBlockSeeds + 1}-${2 * p.trickleBlockSeeds}, …): ` +
      `${s.trickle.perSecond} requests/s on the same client through the whole run, each on a partition no fault rule matches, answered in turn 2xx (a read of an existing entity), ` +
      `403 AuthorizationPermissionMismatch (an upsert the proxy refuses, as for a SAS without the permission), 404 (a read of a missing entity), 409 (an insert of an existing one) ` +
      `and 501 NotImplemented. It keeps getting those answers through every fault but a refusal, which refuses its connections too; its figures are not in the workload's.`,
    "",
    "- **Attempts into a fault**: requests the proxy answered with the fault's rule (held, for the freeze), or the workload's connections refused while it refused. " +
      "**Its bound** is issue 36's, scaled by the operations expected to arrive in the fault's scope while it lasts: a third of them for an account throttle " +
      "(200 of the 600 arriving in a 3-s throttle at 200/s), a quarter for a refusing or resetting endpoint (150 of 600), 40/130 for partitions offline or timing out " +
      "(40 into comeBack's rebalancing part, whose two partitions were out 4 s and 2.5 s: 130 expected arrivals). The issue states none for a frozen endpoint: its attempts are reported only. " +
      "**Into ÷ bound, worst**: the largest ratio over a run's faults.",
    "- **Past the fault's end**: each operation that arrived during a fault in its scope (every partition, or the fault's own), how long after the end of the last fault " +
      "in its scope it met while pending (the one it arrived in, or one that started before it ended) it ended, succeeded or not, **clamped at 0**. " +
      "A partition timing out answers an attempt sent just before the end only after its delay: no retry's figure is the floor.",
    "- **Arrived after**: the latency, from arrival, of each operation that arrived after every fault had ended.",
    "- **Lost acknowledged writes**: after each run the store is read directly (not through the proxy); a write reported successful that is missing or holds another payload. " +
      "**Failed but stored**: writes reported failed that the store holds (an insert applied before its connection was reset answers 409 on its retry).",
    "- A **local failure** is comeBack's: the package's own error or a local stop reason. **Arrival lag**: how far the arrival loop fell behind at worst (the machine's load).",
    "",
    "| configuration | past the end p50, s | p99, s | arrived after p50, ms | p99, ms | succeeded | failed, local | failed, other | lost acknowledged writes | failed but stored | into a fault ÷ its bound, worst | arrival lag, ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...byConfiguration.map((runs) => {
      const c = familyCells(runs);
      return (
        `| ${COMEBACK_LABELS[runs[0]!.configuration]} | ${c.pastEndP50} | ${c.pastEndP99} | ${c.arrivedAfterP50} | ${c.arrivedAfterP99} | ${c.succeeded} | ${c.failedLocal} | ` +
        `${c.failedOther} | ${c.lost} | ${c.failedButStored} | ${c.worstRatio} | ${c.lag} |`
      );
    }),
    "",
    ...worstCasesTable(f),
    "",
    ...shapeTable(f),
    "",
    ...seedTable(f),
  ];
  for (const chart of f.charts) {
    const files = familyChartFiles(chart);
    parts.push(
      "",
      `**Seed ${chart.seed}**, this package's worst case for ${chart.worstOf}: ${chart.faults.map(describeFault).join("; ")}${f.draws.find((d) => d.seed === chart.seed)?.trickle ? "; with the trickle" : ""}.`,
      "",
      `![Seed ${chart.seed}: latency by arrival time](${files.latency})`,
      `![Seed ${chart.seed}: attempts into the faults](${files.attempts})`,
    );
  }
  return parts.join("\n");
}

/** Issue 36's targets: each configuration's worst case over the seeds, with the seed. */
function worstCasesTable(f: FamilyResult): string[] {
  const configurations = f.settings.configurations.filter((c) => f.runs.some((r) => r.configuration === c));
  const worst = new Map(configurations.map((c) => [c, familyWorstCases(f, c)]));
  const targets = (worst.get("package") ?? worst.get(configurations[0] as FamilyConfiguration) ?? []).map((w) => w.target);
  const rows = targets.map((target) => {
    const cells = configurations.map((c) => {
      const w = worst.get(c)?.find((x) => x.target === target);
      if (w === undefined) return "–";
      const verdict = c === "package" ? (w.met ? "**met**" : "**missed**") + ", " : "";
      return `${verdict}${w.worst}, seed ${w.seed}${target.startsWith("attempts") ? ` (${w.detail})` : ""}`;
    });
    return `| ${target} | ${cells.join(" | ")} |`;
  });
  return [
    "Issue 36's targets, the worst case over the seeds (seed named; the verdict is this package's):",
    "",
    `| target | ${configurations.map((c) => COMEBACK_LABELS[c]).join(" | ")} |`,
    `| --- | ${configurations.map(() => "---").join(" | ")} |`,
    ...rows,
  ];
}

/** By shape: its faults' attempts, bounds and past-the-end p99 per configuration, min–max. */
function shapeTable(f: FamilyResult): string[] {
  const configurations = f.settings.configurations.filter((c) => f.runs.some((r) => r.configuration === c));
  const faultsOf = (shape: FamilyShape, c: FamilyConfiguration) => f.runs.filter((r) => r.configuration === c).flatMap((r) => r.faults.filter((x) => x.shape === shape));
  const rows: string[] = [];
  for (const shape of FAMILY_SHAPES) {
    const drawn = f.draws.flatMap((d) => d.faults.filter((x) => x.shape === shape).map((x) => ({ fault: x, trickle: d.trickle })));
    if (drawn.length === 0) continue;
    const ours = faultsOf(shape, "package");
    const within = ours.filter((x) => x.bound !== null && x.attempts <= x.bound).length;
    const bounds = known(ours.map((x) => x.bound));
    rows.push(
      `| ${FAMILY_SHAPE_LABELS[shape]} | ${drawn.length} (${drawn.filter((d) => d.trickle).length}) | ` +
        `${configurations.map((c) => span(faultsOf(shape, c).map((x) => x.attempts))).join(" | ")} | ${bounds.length === 0 ? "–" : span(bounds)} | ` +
        `${bounds.length === 0 ? "–" : `${within} / ${ours.length}`} | ${configurations.map((c) => sec(faultsOf(shape, c).map((x) => x.pastEndP99InMs))).join(" | ")} |`,
    );
  }
  const names = configurations.map((c) => COMEBACK_LABELS[c]);
  return [
    "By shape, min–max over its faults (faults drawn, in brackets those with the trickle):",
    "",
    `| shape | faults | ${names.map((n) => `into it: ${n}`).join(" | ")} | bound | this package within it | ${names.map((n) => `past the end p99, s: ${n}`).join(" | ")} |`,
    `| --- | ---: | ${names.map(() => "---:").join(" | ")} | ---: | ---: | ${names.map(() => "---:").join(" | ")} |`,
    ...rows,
  ];
}

/** Each seed: what it drew, and each configuration's figures. */
function seedTable(f: FamilyResult): string[] {
  const configurations = f.settings.configurations.filter((c) => f.runs.some((r) => r.configuration === c));
  const initials: Record<FamilyConfiguration, string> = { package: "package", "sdk-default": "SDK", "no-retry": "none" };
  const order = configurations.map((c) => initials[c]).join(" / ");
  const rows = f.draws.map((d) => {
    const runs = configurations.map((c) => f.runs.find((r) => r.seed === d.seed && r.configuration === c));
    const each = (pick: (r: FamilyRun) => string) => runs.map((r) => (r === undefined ? "–" : pick(r))).join(" / ");
    const into = (r: FamilyRun | undefined, withBound: boolean) =>
      r === undefined ? "–" : r.faults.map((x) => `${x.id} ${x.attempts}${withBound && x.bound !== null ? ` (${x.bound})` : ""}`).join(", ");
    const ours = runs[configurations.indexOf("package")];
    const sdk = runs[configurations.indexOf("sdk-default")];
    return (
      `| ${d.seed} | ${d.faults.map((x) => `${x.id} ${describeFault(x)}`).join("; ")} | ${d.trickle ? "yes" : "no"} | ` +
      `${each((r) => cell(r.pastEndP99InMs === null ? null : r.pastEndP99InMs / 1000, 2))} | ${each((r) => cell(r.arrivedAfterP99InMs))} | ` +
      `${into(ours, true)} | ${into(sdk, false)} | ${each((r) => String(r.succeeded))} | ${each((r) => String(r.failedLocal))} | ${each((r) => String(r.lostWrites))} | ` +
      `${Math.max(...runs.map((r) => r?.maxStartLagInMs ?? 0))} | ${Math.max(...runs.map((r) => r?.loadAverage ?? 0))} |`
    );
  });
  return [
    `Each seed (cells with a slash: ${order}; attempts into each fault with its bound in brackets; lag and load: the largest of the seed's runs):`,
    "",
    `| seed | faults drawn | trickle | past the end p99, s | arrived after p99, ms | into each fault: this package | SDK default | succeeded (of ${f.runs[0]?.operations ?? 0}) | failed, local | lost | arrival lag, ms | load |`,
    "| ---: | --- | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ];
}

const CONFIGURATION_COLORS: Record<FamilyConfiguration, string> = { package: "#1f77b4", "sdk-default": "#d62728", "no-retry": "#7f7f7f" };
const SHAPE_COLORS: Record<FamilyShape, string> = {
  "throttle-all": "#d62728",
  "throttle-share": "#e377c2",
  "throttle-rate": "#ff7f0e",
  "partitions-offline": "#bcbd22",
  "partitions-timing-out": "#8c564b",
  frozen: "#17becf",
  refused: "#9467bd",
  resetting: "#2ca02c",
};

function bands(faults: readonly FamilyFault[]): Band[] {
  return faults.map((x) => ({ label: `${x.id} ${describeFault(x)}`, color: SHAPE_COLORS[x.shape], fromInMs: x.startInMs, toInMs: x.endInMs }));
}

/** Latency by arrival time (largest and median per bin), this package and the SDK default, the faults shaded. */
export function familyLatencyChart(chart: FamilyChart): string {
  const lines = (pick: "p50InMs" | "maxInMs") =>
    chart.series.map((series) => ({
      label: COMEBACK_LABELS[series.configuration],
      color: CONFIGURATION_COLORS[series.configuration],
      values: series[pick].map((value) => value / 1000),
      dashed: series.configuration !== "package",
    }));
  return panelChart({
    title: `Fault family, seed ${chart.seed} (worst case for ${chart.worstOf}): latency by arrival time`,
    binInMs: chart.binInMs,
    yLabel: "latency, s",
    panelHeight: 150,
    bands: bands(chart.faults),
    panels: [
      { title: `largest latency of the operations arriving in each ${chart.binInMs} ms`, lines: lines("maxInMs") },
      { title: `median latency of the operations arriving in each ${chart.binInMs} ms`, lines: lines("p50InMs") },
    ],
  });
}

/** Attempts into the faults by the time they were made, the same seed. */
export function familyAttemptsChart(chart: FamilyChart): string {
  return panelChart({
    title: `Fault family, seed ${chart.seed}: attempts into the faults`,
    binInMs: chart.binInMs,
    yLabel: `per ${chart.binInMs} ms`,
    panelHeight: 160,
    bands: bands(chart.faults),
    panels: [
      {
        title: `requests answered with a fault's rule (held, for a freeze) or connections refused, per ${chart.binInMs} ms`,
        lines: chart.series.map((series) => ({
          label: COMEBACK_LABELS[series.configuration],
          color: CONFIGURATION_COLORS[series.configuration],
          values: series.intoFaults,
          dashed: series.configuration !== "package",
        })),
      },
    ],
  });
}
