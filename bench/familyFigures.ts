// The fault family's figures across seeds: the result types, each target's worst case with its
// seed, and the min–max cells the summary and the report share (bench/faultFamily.ts measures them).
import { round } from "../tools/report/stats.js";
import { textTable } from "../tools/report/textTable.js";
import { describeFault, type FamilyDraw, type FamilyFault, type FamilyShape } from "./familyDraw.js";
import type { FamilyConfiguration, FamilySettings } from "./faultFamily.js";
import { span } from "./pacing.js";

/** One operation: arrival and end (ms from the run's start), outcome (1 succeeded, 0 failed, -1 failed for a local reason), partition index. */
export type FamilyRecord = [arrivalInMs: number, endInMs: number, outcome: 1 | 0 | -1, partition: number];

/** One fault's figures in one run. */
export interface FamilyFaultFigures {
  id: string;
  shape: FamilyShape;
  /** Requests answered with the fault's rule (held, for the freeze), or the workload's connections refused. */
  attempts: number;
  /** Issue 36's bound scaled to the fault (familyDraw.ts's attemptsBound); null where it states none (the freeze). */
  bound: number | null;
  /** Operations that arrived during the fault and in its scope, and how many of them succeeded. */
  inFault: number;
  inFaultSucceeded: number;
  /** Past the end (see FamilyRun) of the operations that arrived in it; null when none did. */
  pastEndP99InMs: number | null;
}

/** One configuration's figures in one seed. Latencies in ms. */
export interface FamilyRun {
  seed: number;
  configuration: FamilyConfiguration;
  operations: number;
  succeeded: number;
  /** Failed for a local reason: the package's own error or a local stop reason (comeBack's isLocalComeBackFailure). */
  failedLocal: number;
  failedOther: number;
  failures: Record<string, number>;
  faults: FamilyFaultFigures[];
  /**
   * Each operation that arrived during a fault in its scope: how long after the end of the last
   * fault in its scope that it met while pending (the one it arrived in, or one that started
   * before it ended) it ended, succeeded or not, clamped at 0. p50 / p99 / max.
   */
  inFault: number;
  pastEndP50InMs: number | null;
  pastEndP99InMs: number | null;
  pastEndMaxInMs: number | null;
  /** Operations that arrived after every fault had ended: their latency from arrival. */
  arrivedAfter: number;
  arrivedAfterSucceeded: number;
  arrivedAfterP50InMs: number | null;
  arrivedAfterP99InMs: number | null;
  arrivedAfterMaxInMs: number | null;
  /** Requests the proxy saw from the workload, plus its connections refused. */
  attempts: number;
  attemptsByRule: Record<string, number>;
  /** Writes acknowledged as a success that the store does not hold with their payload (must be 0). */
  lostWrites: number;
  /** Writes reported failed that the store holds. */
  failedButStored: number;
  /** The trickle (seeds that have one): requests made, their answers (status, or failure), attempts, connections refused. */
  trickle?: { operations: number; answers: Record<string, number>; asIntended: number; attempts: number; refused: number };
  /** The latest an arrival started after its scheduled time (the event loop's lag), and the 1-min load average at the start. */
  maxStartLagInMs: number;
  loadAverage: number;
  /** Operations still running at the drain deadline and aborted. */
  abandoned: number;
  elapsedInMs: number;
  records?: FamilyRecord[];
}

/** A chart's data: by arrival-time bin, latencies (median, largest) and attempts into the faults, per configuration. */
export interface FamilyChart {
  /** The package's worst case for the latency targets, or (when another seed) for attempts into a fault. */
  kind: "latency" | "attempts";
  seed: number;
  /** Why this seed: which target it is the worst case of. */
  worstOf: string;
  binInMs: number;
  faults: FamilyFault[];
  series: Array<{ configuration: FamilyConfiguration; p50InMs: number[]; maxInMs: number[]; intoFaults: number[] }>;
}

export interface FamilyResult {
  settings: FamilySettings;
  draws: FamilyDraw[];
  runs: FamilyRun[];
  charts: FamilyChart[];
  /** When it started, and the source measured: the commit and how many files under src/ differed from it. */
  startedAt: string;
  source: { commit: string; uncommittedSourceFiles: number };
  /** The 1-min load average when the benchmark started and ended (the machine is shared). */
  loadAverage: { start: number; end: number };
  elapsedInMs: number;
}

/** Issue 36's targets (attempts: familyDraw.ts's attemptsBound). */
export const FAMILY_TARGETS = { pastEndP99InMs: 1_000, arrivedAfterP99InMs: 250 } as const;

// ---------------------------------------------------------------------------------------------
// Worst cases

/** One target's worst case over the seeds run, for one configuration. */
export interface FamilyWorst {
  target: string;
  /** The worst figure, as text (e.g. `2.4 s`, `310 / 261`). */
  worst: string;
  seed: number;
  /** What the seed drew, or which fault. */
  detail: string;
  met: boolean;
  /** How far past the target, as a ratio (1 = at the target), to rank seeds for the chart. */
  ratio: number;
}

/** The classes of faults issue 36 bounds separately. */
const ATTEMPT_CLASSES: ReadonlyArray<{ target: string; shapes: readonly FamilyShape[] }> = [
  { target: "attempts into an account throttle <= its bound", shapes: ["throttle-all", "throttle-share", "throttle-rate"] },
  { target: "attempts into a refusing or resetting endpoint <= its bound", shapes: ["refused", "resetting"] },
  { target: "attempts into partitions offline or timing out <= its bound", shapes: ["partitions-offline", "partitions-timing-out"] },
];

/** Each target's worst case for `configuration` (undefined targets are left out when no run has the figure). */
export function familyWorstCases(result: FamilyResult, configuration: FamilyConfiguration = "package"): FamilyWorst[] {
  const runs = result.runs.filter((r) => r.configuration === configuration);
  if (runs.length === 0) return [];
  const drawOf = (seed: number) => result.draws.find((d) => d.seed === seed);
  const seedText = (seed: number) => {
    const d = drawOf(seed);
    return d === undefined ? "" : `${d.faults.map(describeFault).join("; ")}${d.trickle ? "; trickle" : ""}`;
  };
  const worstBy = (pick: (r: FamilyRun) => number | null): FamilyRun | undefined =>
    runs.filter((r) => pick(r) !== null).reduce<FamilyRun | undefined>((worst, r) => (worst === undefined || (pick(r) as number) > (pick(worst) as number) ? r : worst), undefined);
  const out: FamilyWorst[] = [];
  for (const { target, shapes } of ATTEMPT_CLASSES) {
    let worst: { run: FamilyRun; fault: FamilyFaultFigures; ratio: number } | undefined;
    for (const run of runs) {
      for (const fault of run.faults) {
        if (!shapes.includes(fault.shape) || fault.bound === null) continue;
        const ratio = fault.attempts / Math.max(1, fault.bound);
        if (worst === undefined || ratio > worst.ratio) worst = { run, fault, ratio };
      }
    }
    if (worst === undefined) continue;
    const drawn = drawOf(worst.run.seed)?.faults.find((f) => f.id === worst.fault.id);
    out.push({
      target,
      worst: `${worst.fault.attempts} / ${worst.fault.bound}`,
      seed: worst.run.seed,
      detail: drawn === undefined ? worst.fault.id : describeFault(drawn),
      met: worst.ratio <= 1,
      ratio: worst.ratio,
    });
  }
  const pastEnd = worstBy((r) => r.pastEndP99InMs);
  if (pastEnd !== undefined) {
    const value = pastEnd.pastEndP99InMs as number;
    out.push({ target: `past the fault's end p99 <= ${FAMILY_TARGETS.pastEndP99InMs / 1000} s`, worst: `${round(value / 1000, 2)} s`, seed: pastEnd.seed, detail: seedText(pastEnd.seed), met: value <= FAMILY_TARGETS.pastEndP99InMs, ratio: value / FAMILY_TARGETS.pastEndP99InMs });
  }
  const after = worstBy((r) => r.arrivedAfterP99InMs);
  if (after !== undefined) {
    const value = after.arrivedAfterP99InMs as number;
    out.push({ target: `arrived after p99 <= ${FAMILY_TARGETS.arrivedAfterP99InMs} ms`, worst: `${value} ms`, seed: after.seed, detail: seedText(after.seed), met: value <= FAMILY_TARGETS.arrivedAfterP99InMs, ratio: value / FAMILY_TARGETS.arrivedAfterP99InMs });
  }
  const fewest = worstBy((r) => r.operations - r.succeeded);
  if (fewest !== undefined) {
    out.push({ target: "every operation succeeds", worst: `${fewest.succeeded} / ${fewest.operations}`, seed: fewest.seed, detail: seedText(fewest.seed), met: fewest.succeeded === fewest.operations, ratio: fewest.operations - fewest.succeeded });
  }
  const local = worstBy((r) => r.failedLocal);
  if (local !== undefined) out.push({ target: "0 failed for a local reason", worst: String(local.failedLocal), seed: local.seed, detail: seedText(local.seed), met: local.failedLocal === 0, ratio: local.failedLocal });
  const lost = worstBy((r) => r.lostWrites);
  if (lost !== undefined) out.push({ target: "0 acknowledged writes lost", worst: String(lost.lostWrites), seed: lost.seed, detail: seedText(lost.seed), met: lost.lostWrites === 0, ratio: lost.lostWrites });
  return out;
}

/** The package's seed furthest past the latency targets (past the end, arrived after, whichever is worse in ratio). */
export function worstLatencySeed(runs: readonly FamilyRun[]): { seed: number; worstOf: string } | undefined {
  let worst: { seed: number; ratio: number; worstOf: string } | undefined;
  for (const r of runs) {
    if (r.configuration !== "package") continue;
    const past = (r.pastEndP99InMs ?? 0) / FAMILY_TARGETS.pastEndP99InMs;
    const after = (r.arrivedAfterP99InMs ?? 0) / FAMILY_TARGETS.arrivedAfterP99InMs;
    const ratio = Math.max(past, after);
    if (worst === undefined || ratio > worst.ratio) {
      worst = { seed: r.seed, ratio, worstOf: past >= after ? `past the fault's end p99 (${r.pastEndP99InMs} ms)` : `arrived after p99 (${r.arrivedAfterP99InMs} ms)` };
    }
  }
  return worst;
}

/** Per configuration min–max over the seeds, then the package's worst cases. */
export function familySummary(result: FamilyResult): string[] {
  const s = result.settings;
  const rows = s.configurations
    .map((c) => result.runs.filter((r) => r.configuration === c))
    .filter((runs) => runs.length > 0)
    .map((runs) => {
      const c = familyCells(runs);
      return [runs[0]!.configuration, c.pastEndP50, c.pastEndP99, c.arrivedAfterP50, c.arrivedAfterP99, c.succeeded, c.failedLocal, c.failedOther, c.lost, c.failedButStored, c.worstRatio, c.lag];
    });
  const lines = [`family, seeds ${s.firstSeed}-${s.firstSeed + s.seeds - 1}, min–max (${Math.round(result.elapsedInMs / 1000)} s):`];
  const header = ["configuration", "past end p50, s", "p99, s", "arrived after p50, ms", "p99, ms", "succeeded", "local", "other", "lost", "failed but stored", "into / bound, worst", "lag, ms"];
  lines.push(...textTable(header, rows));
  lines.push("", "worst cases, this package:");
  for (const w of familyWorstCases(result)) lines.push(`  ${w.met ? "met   " : "MISSED"} ${w.target}: ${w.worst}, seed ${w.seed} (${w.detail})`);
  return lines;
}

/** A configuration's figures, min–max over its runs, as table cells: what familySummary and the report share. */
export function familyCells(runs: readonly FamilyRun[]): Record<"pastEndP50" | "pastEndP99" | "arrivedAfterP50" | "arrivedAfterP99" | "succeeded" | "failedLocal" | "failedOther" | "lost" | "failedButStored" | "worstRatio" | "lag", string> {
  const known = (values: ReadonlyArray<number | null>) => values.filter((v): v is number => v !== null);
  const ratios = runs.flatMap((r) => r.faults.filter((f) => f.bound !== null).map((f) => f.attempts / Math.max(1, f.bound as number)));
  return {
    pastEndP50: span(known(runs.map((r) => r.pastEndP50InMs)).map((v) => v / 1000), 2),
    pastEndP99: span(known(runs.map((r) => r.pastEndP99InMs)).map((v) => v / 1000), 2),
    arrivedAfterP50: span(known(runs.map((r) => r.arrivedAfterP50InMs))),
    arrivedAfterP99: span(known(runs.map((r) => r.arrivedAfterP99InMs))),
    succeeded: `${span(runs.map((r) => r.succeeded))} / ${runs[0]?.operations ?? 0}`,
    failedLocal: span(runs.map((r) => r.failedLocal)),
    failedOther: span(runs.map((r) => r.failedOther)),
    lost: span(runs.map((r) => r.lostWrites)),
    failedButStored: span(runs.map((r) => r.failedButStored)),
    worstRatio: ratios.length === 0 ? "–" : `${round(Math.max(...ratios), 2)}x`,
    lag: span(runs.map((r) => r.maxStartLagInMs)),
  };
}
