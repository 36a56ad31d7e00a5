// Metric families that bind label children once (prom-client's per-call label hashing costs more
// than the rest of recording). Over 250 lines: counter, gauge and histogram families share one base.
import type { Metric, Registry, RegistryContentType } from "prom-client";

/**
 * Lean metric families that a prom-client `Registry` exposes like its own Counter, Gauge
 * and Histogram (same `get()`/`reset()` contract, same text output, cluster aggregation by
 * sum). They exist for the hot path: prom-client hashes and validates the label object on
 * every `inc()`/`observe()`, while a child here is bound once per label set and then costs
 * one addition (docs/benchmarks.md, "Why the code is as it is").
 */

/** Marks our families in a registry, across two copies of the package (ESM + CJS). */
const FAMILY_MARKER = Symbol.for("azure-storage-resilience.metricFamily");
/** Bumped whenever a family's internal shape changes, so incompatible copies do not share one. */
const FAMILY_SHAPE_VERSION = 1;

/** The prom-client metric types our families report. */
export type FamilyType = "counter" | "gauge" | "histogram";

/** One label set's value in a family's `get()` output, as prom-client's registry reads it. */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** What prom-client's registry reads from a metric. */
interface MetricSnapshot {
  name: string;
  help: string;
  type: FamilyType;
  values: MetricValue[];
  aggregator: "sum";
}

/** The fields every family shares; what the compatibility check reads. */
abstract class Family {
  readonly [FAMILY_MARKER] = FAMILY_SHAPE_VERSION;
  readonly aggregator = "sum";
  abstract readonly type: FamilyType;
  // Not readonly: an OpenMetrics registry rewrites counter names (drops `_total`) when scraping.
  name: string;
  readonly help: string;
  readonly labelNames: readonly string[];

  // Fields spelled out rather than as parameter properties, which Node's type stripping rejects.
  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  abstract get(): Promise<MetricSnapshot>;
  abstract reset(): void;
}

/** One counter series: bound to its labels once, incremented by plain addition. */
export class CounterChild {
  value = 0;
  readonly labels: Readonly<Record<string, string>>;

  constructor(labels: Readonly<Record<string, string>>) {
    this.labels = labels;
  }

  /** Adds `amount` (default 1). */
  inc(amount = 1): void {
    this.value += amount;
  }
}

/** A counter family; every child ever bound is exported, at 0 until incremented. */
export class CounterFamily extends Family {
  readonly type = "counter";
  readonly #children = new Map<string, CounterChild>();

  /** The child for `labels` (every label name, in any order); created on first use. Not for hot paths. */
  child(labels: Readonly<Record<string, string>>): CounterChild {
    const key = seriesKey(this.labelNames, labels);
    let child = this.#children.get(key);
    if (child === undefined) {
      child = new CounterChild(pickLabels(this.name, this.labelNames, labels));
      this.#children.set(key, child);
    }
    return child;
  }

  get(): Promise<MetricSnapshot> {
    const values: MetricValue[] = [];
    for (const child of this.#children.values()) values.push({ labels: child.labels, value: child.value });
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  /** Zeroes every series; children stay bound, since observers hold them. */
  reset(): void {
    for (const child of this.#children.values()) child.value = 0;
  }
}

/** One histogram series: per-bucket counts (not cumulative), sum and count. */
export class HistogramChild {
  readonly counts: Float64Array;
  readonly labels: Readonly<Record<string, string>>;
  readonly upperBounds: readonly number[];
  sum = 0;
  count = 0;

  constructor(labels: Readonly<Record<string, string>>, upperBounds: readonly number[]) {
    this.labels = labels;
    this.upperBounds = upperBounds;
    this.counts = new Float64Array(upperBounds.length);
  }

  /** Records one value; values above the last bound only count toward `+Inf`. */
  observe(value: number): void {
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        (this.counts[i] as number)++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

/** A histogram family with fixed bucket upper bounds (seconds). */
export class HistogramFamily extends Family {
  readonly type = "histogram";
  readonly #children = new Map<string, HistogramChild>();

  readonly upperBounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], upperBounds: readonly number[]) {
    super(name, help, labelNames);
    this.upperBounds = upperBounds;
  }

  /** The child for `labels`; created on first use. Not for hot paths. */
  child(labels: Readonly<Record<string, string>>): HistogramChild {
    const key = seriesKey(this.labelNames, labels);
    let child = this.#children.get(key);
    if (child === undefined) {
      child = new HistogramChild(pickLabels(this.name, this.labelNames, labels), this.upperBounds);
      this.#children.set(key, child);
    }
    return child;
  }

  get(): Promise<MetricSnapshot> {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const child of this.#children.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.upperBounds.length; i++) {
        cumulative += child.counts[i] as number;
        values.push({ labels: { ...child.labels, le: this.upperBounds[i] as number }, value: cumulative, metricName: bucketName });
      }
      values.push({ labels: { ...child.labels, le: "+Inf" }, value: child.count, metricName: bucketName });
      values.push({ labels: child.labels, value: child.sum, metricName: `${this.name}_sum` });
      values.push({ labels: child.labels, value: child.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    for (const child of this.#children.values()) {
      child.counts.fill(0);
      child.sum = 0;
      child.count = 0;
    }
  }
}

/** Something that contributes gauge values when the registry is scraped. */
export type GaugeCollector = (emit: (labels: Readonly<Record<string, string>>, value: number) => void) => void;

/** A gauge family whose values are read from collectors at scrape time (nothing on the hot path). */
export class CollectedGaugeFamily extends Family {
  readonly type = "gauge";
  readonly collectors = new Set<GaugeCollector>();

  get(): Promise<MetricSnapshot> {
    const sums = new Map<string, MetricValue>();
    const emit = (labels: Readonly<Record<string, string>>, value: number): void => {
      const key = seriesKey(this.labelNames, labels);
      const existing = sums.get(key);
      if (existing) existing.value += value;
      else sums.set(key, { labels: pickLabels(this.name, this.labelNames, labels), value });
    };
    for (const collector of this.collectors) collector(emit);
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values: [...sums.values()], aggregator: this.aggregator });
  }

  /** Nothing to reset: values are read fresh on every scrape. */
  reset(): void {}
}

/** What {@link registerFamily} needs to find or create a family. */
export interface FamilySpec<F extends Family> {
  name: string;
  help: string;
  type: FamilyType;
  labelNames: readonly string[];
  /** Histogram bucket upper bounds; compared when reusing a histogram. */
  upperBounds?: readonly number[];
  create(): F;
}

/**
 * Returns the family registered under `spec.name`, or registers a new one. Reusing is what
 * lets many clients (or a second install) share a registry without prom-client's
 * "already registered" error; anything else under the name is refused with an error that
 * says what squats it.
 */
export function registerFamily<F extends Family>(registry: Registry<RegistryContentType>, spec: FamilySpec<F>): F {
  const existing = registry.getSingleMetric(spec.name) as unknown;
  if (existing === undefined) {
    const family = spec.create();
    registry.registerMetric(family as unknown as Metric);
    return family;
  }
  assertCompatible(existing, spec);
  return existing as F;
}

function assertCompatible(existing: unknown, spec: FamilySpec<Family>): void {
  const found = existing as Partial<Family> & { [FAMILY_MARKER]?: unknown; upperBounds?: readonly number[] };
  const expected = `a ${spec.type} with labels [${spec.labelNames.join(", ")}]`;
  const fix = "Pass another metrics.prefix or metrics.registry, or remove the other metric.";
  if (found[FAMILY_MARKER] !== FAMILY_SHAPE_VERSION) {
    const what = typeof found.type === "string" ? `a ${found.type}` : "a metric";
    const owner = found[FAMILY_MARKER] === undefined ? "not created by azure-storage-resilience" : "from an incompatible version of azure-storage-resilience";
    throw new Error(`Cannot register metric ${spec.name}: the registry already holds ${what} under that name, ${owner}; expected ${expected}. ${fix}`);
  }
  if (found.type !== spec.type || !sameList(found.labelNames ?? [], spec.labelNames)) {
    const labels = (found.labelNames ?? []).join(", ");
    throw new Error(`Cannot register metric ${spec.name}: the registry already holds a ${found.type} with labels [${labels}]; expected ${expected}. ${fix}`);
  }
  if (spec.upperBounds !== undefined && !sameList(found.upperBounds ?? [], spec.upperBounds)) {
    throw new Error(
      `Cannot register metric ${spec.name}: it is already registered with buckets [${(found.upperBounds ?? []).join(", ")}], ` +
        `not [${spec.upperBounds.join(", ")}]. Every install on one registry must use the same metrics.bucketsInSeconds.`,
    );
  }
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

/** A unique key for a label set; only computed when a child is bound or at scrape time. */
function seriesKey(labelNames: readonly string[], labels: Readonly<Record<string, string>>): string {
  return labelNames.map((name) => labels[name] ?? "").join("\u0000");
}

/** The family's labels, in its order; every one must be given. */
function pickLabels(metric: string, labelNames: readonly string[], labels: Readonly<Record<string, string>>): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of labelNames) {
    const value = labels[name];
    if (typeof value !== "string") throw new TypeError(`Metric ${metric} needs a string value for label "${name}".`);
    picked[name] = value;
  }
  return picked;
}
