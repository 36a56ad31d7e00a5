import { mulberry32 } from "../load/mulberry32.js";

/** What one demo operation does. */
export type DemoOperationKind = "insert" | "upsert" | "read" | "query" | "batch";

/** Every {@link DemoOperationKind}. */
export const DEMO_OPERATION_KINDS: readonly DemoOperationKind[] = ["insert", "upsert", "read", "query", "batch"];

/** One operation of the plan, fired at `atInMs` whatever happened to earlier ones (open loop). */
export interface PlannedOperation {
  /** 0, 1, 2 ... in firing order. */
  id: number;
  /** When to fire it, from the start of the run. */
  atInMs: number;
  /** The PartitionKey it goes to. */
  partition: string;
  kind: DemoOperationKind;
  /** Writes: the new RowKeys (unique in the run). Reads: the seeded RowKey read. Queries: none. */
  rowKeys: string[];
}

/** Options of {@link planWorkload}. */
export interface WorkloadOptions {
  /** How long operations are fired. */
  durationInMs: number;
  /** Operations per second across all partitions, outside the surge. */
  ratePerSecond: number;
  /** How many partitions (`p0` ... `p{n-1}`); `p0` is the hot one. */
  partitions: number;
  /** Seed of the generator: the same seed gives the same plan. */
  seed: number;
}

/** A generated workload. */
export interface WorkloadPlan {
  operations: PlannedOperation[];
  /** The PartitionKeys, hot one first. */
  partitions: string[];
  /** The hot partition. */
  hotPartition: string;
  /** Each partition's share of the base rate. */
  shares: Record<string, number>;
  /** While the hot partition's rate is multiplied by {@link SURGE_MULTIPLIER}. */
  surge: { startInMs: number; endInMs: number };
}

/** The share of the traffic the hot partition gets (at least an equal share). */
export const HOT_SHARE = 0.4;
/** How much the hot partition's rate grows during its surge. */
export const SURGE_MULTIPLIER = 2;
/** The surge window, as fractions of the run. */
export const SURGE_WINDOW = { start: 0.1, end: 0.35 } as const;
/** The operation mix (fractions summing to 1). */
export const OPERATION_MIX: Readonly<Record<DemoOperationKind, number>> = { insert: 0.35, upsert: 0.2, read: 0.2, query: 0.1, batch: 0.15 };
/** Entities per `$batch`. */
export const BATCH_SIZE = 5;
/** Rows seeded in each partition before the run, for point reads. */
export const SEEDED_ROWS = 10;

/** The PartitionKeys of a run with `count` partitions. */
export function partitionNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `p${i}`);
}

/** Each partition's share of the base rate: the hot one {@link HOT_SHARE} (or an equal share if larger), the rest split evenly. */
export function partitionShares(count: number): number[] {
  if (count <= 1) return [1];
  const hot = Math.max(HOT_SHARE, 1 / count);
  return [hot, ...Array.from({ length: count - 1 }, () => (1 - hot) / (count - 1))];
}

/** Entities an operation touches on average under {@link OPERATION_MIX}. */
export function meanEntitiesPerOperation(): number {
  let mean = 0;
  for (const kind of DEMO_OPERATION_KINDS) mean += OPERATION_MIX[kind] * entitiesOf(kind);
  return mean;
}

/** Entities one operation of `kind` touches. */
export function entitiesOf(kind: DemoOperationKind): number {
  return kind === "batch" ? BATCH_SIZE : 1;
}

/**
 * The demo's per-partition throttling target, in entities/s: 25 % above the busiest
 * partition's base load, so that only the hot partition's surge passes it. Azure's target
 * is 2,000 entities/s; the demo scales it down to what a laptop drives.
 */
export function throttleTargetPerSecond(ratePerSecond: number, partitions: number): number {
  const busiest = Math.max(...partitionShares(partitions));
  return Math.max(BATCH_SIZE, Math.ceil(1.25 * busiest * ratePerSecond * meanEntitiesPerOperation()));
}

/**
 * The demo's open-loop workload: per partition a Poisson stream of operations (the hot
 * partition's doubled during its surge), merged in time order. Pure and seeded.
 */
export function planWorkload(options: WorkloadOptions): WorkloadPlan {
  const { durationInMs, ratePerSecond, partitions: count, seed } = options;
  const random = mulberry32(seed);
  const partitions = partitionNames(count);
  const shares = partitionShares(count);
  const surge = { startInMs: durationInMs * SURGE_WINDOW.start, endInMs: durationInMs * SURGE_WINDOW.end };
  const arrivals: Array<{ atInMs: number; partition: string }> = [];
  partitions.forEach((partition, index) => {
    const baseRate = ratePerSecond * (shares[index] ?? 0);
    const peakRate = index === 0 ? baseRate * SURGE_MULTIPLIER : baseRate;
    const rateAt = (t: number) => (index === 0 && t >= surge.startInMs && t < surge.endInMs ? peakRate : baseRate);
    // Thinning: draw at the peak rate, keep each arrival with probability rate(t) / peak.
    for (let t = nextArrival(0, peakRate, random); t < durationInMs; t = nextArrival(t, peakRate, random)) {
      if (random() < rateAt(t) / peakRate) arrivals.push({ atInMs: t, partition });
    }
  });
  arrivals.sort((a, b) => a.atInMs - b.atInMs);
  const operations = arrivals.map(({ atInMs, partition }, id) => {
    const kind = pickKind(random());
    return { id, atInMs: Math.round(atInMs), partition, kind, rowKeys: rowKeysFor(kind, id, random) };
  });
  return {
    operations,
    partitions,
    hotPartition: partitions[0] ?? "p0",
    shares: Object.fromEntries(partitions.map((p, i) => [p, shares[i] ?? 0])),
    surge,
  };
}

function nextArrival(t: number, ratePerSecond: number, random: () => number): number {
  if (ratePerSecond <= 0) return Infinity;
  return t - (Math.log(1 - random()) / ratePerSecond) * 1000;
}

function pickKind(draw: number): DemoOperationKind {
  let cumulative = 0;
  for (const kind of DEMO_OPERATION_KINDS) {
    cumulative += OPERATION_MIX[kind];
    if (draw < cumulative) return kind;
  }
  return "insert";
}

function rowKeysFor(kind: DemoOperationKind, id: number, random: () => number): string[] {
  const padded = String(id).padStart(6, "0");
  switch (kind) {
    case "insert":
    case "upsert":
      return [`${kind}-${padded}`];
    case "batch":
      return Array.from({ length: BATCH_SIZE }, (_, i) => `batch-${padded}-${i}`);
    case "read":
      return [seededRowKey(Math.floor(random() * SEEDED_ROWS))];
    case "query":
      return [];
  }
}

/** The RowKey of seeded row `index`. */
export function seededRowKey(index: number): string {
  return `seed-${String(index).padStart(2, "0")}`;
}

/** Whether an operation writes (and so must be found in the store once acknowledged). */
export function isWrite(kind: DemoOperationKind): boolean {
  return kind === "insert" || kind === "upsert" || kind === "batch";
}
