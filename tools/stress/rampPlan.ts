import { mulberry32 } from "../load/mulberry32.js";

/** What one stress operation does. */
export type StressOperationKind = "upsert" | "read" | "query" | "batch";

/** The mix, as the guide asks: "the application's real mix of queries and writes". */
export const STRESS_MIX: Readonly<Record<StressOperationKind, number>> = { upsert: 0.6, read: 0.25, query: 0.05, batch: 0.1 };
/** Upserts per `$batch`. */
export const STRESS_BATCH_SIZE = 10;
/** Entities a query page asks for. */
export const STRESS_QUERY_PAGE = 10;
/** The rows of loaded entities per `$batch` while loading (the most a batch may hold). */
export const LOAD_BATCH_SIZE = 100;

/** One step of the ramp. */
export interface RampStep {
  /** 0-based. */
  index: number;
  /** Entities/s asked for in this step. */
  entitiesPerSecond: number;
  startInMs: number;
  endInMs: number;
}

/** One planned operation. */
export interface StressOperation {
  atInMs: number;
  step: number;
  kind: StressOperationKind;
  /** Indexes of the loaded entities it touches (distinct within a batch); none for a query. */
  rows: number[];
}

/** Options of {@link planRamp}. */
export interface RampOptions {
  startRate: number;
  maxRate: number;
  steps: number;
  stepDurationInSeconds: number;
  /** How many entities were loaded (rows 0 ... entities-1). */
  entities: number;
  seed?: number;
}

/**
 * Entities one operation counts for against the per-partition target: a `$batch` its
 * entities, anything else (a query too, as one request) 1. The simulator counts the same way.
 */
export function entitiesPerOperation(kind: StressOperationKind): number {
  return kind === "batch" ? STRESS_BATCH_SIZE : 1;
}

/** Mean entities per operation under {@link STRESS_MIX}. */
export function meanEntitiesPerStressOperation(): number {
  return (Object.keys(STRESS_MIX) as StressOperationKind[]).reduce((sum, kind) => sum + STRESS_MIX[kind] * entitiesPerOperation(kind), 0);
}

/** The steps' rates: `steps` evenly spaced from `startRate` to `maxRate`. Pure. */
export function rampRates(startRate: number, maxRate: number, steps: number): number[] {
  if (steps <= 1) return [maxRate];
  return Array.from({ length: steps }, (_, i) => Math.round(startRate + ((maxRate - startRate) * i) / (steps - 1)));
}

/**
 * The ramp: per step, operations evenly spaced so that the entities they touch add up to
 * the step's rate, kinds drawn from {@link STRESS_MIX}. Pure and seeded.
 */
export function planRamp(options: RampOptions): { steps: RampStep[]; operations: StressOperation[] } {
  const random = mulberry32(options.seed ?? 1);
  const stepInMs = options.stepDurationInSeconds * 1000;
  const mean = meanEntitiesPerStressOperation();
  const steps = rampRates(options.startRate, options.maxRate, options.steps).map((entitiesPerSecond, index) => ({
    index,
    entitiesPerSecond,
    startInMs: index * stepInMs,
    endInMs: (index + 1) * stepInMs,
  }));
  const operations: StressOperation[] = [];
  for (const step of steps) {
    const count = Math.max(1, Math.round((step.entitiesPerSecond / mean) * options.stepDurationInSeconds));
    for (let i = 0; i < count; i++) {
      const kind = pickKind(random());
      operations.push({ atInMs: Math.round(step.startInMs + (i * stepInMs) / count), step: step.index, kind, rows: rowsFor(kind, options.entities, random) });
    }
  }
  return { steps, operations };
}

function pickKind(draw: number): StressOperationKind {
  let cumulative = 0;
  for (const kind of Object.keys(STRESS_MIX) as StressOperationKind[]) {
    cumulative += STRESS_MIX[kind];
    if (draw < cumulative) return kind;
  }
  return "upsert";
}

function rowsFor(kind: StressOperationKind, entities: number, random: () => number): number[] {
  if (kind === "query") return [];
  if (kind !== "batch") return [Math.floor(random() * entities)];
  // A batch may not touch one entity twice: a run of distinct rows from a random start.
  const size = Math.min(STRESS_BATCH_SIZE, entities);
  const start = Math.floor(random() * entities);
  return Array.from({ length: size }, (_, i) => (start + i) % entities);
}

/** The RowKey of loaded entity `index`. */
export function stressRowKey(index: number): string {
  return `row-${String(index).padStart(6, "0")}`;
}
