import { isRestError, type RestError } from "@azure/core-rest-pipeline";
import type { TableClient, TableEntityResult, TransactionAction } from "@azure/data-tables";
import { getRetryInfo, installResilience, type AmbiguousWriteEvent, type InstallResilienceOptions } from "../../src/index.js";
import { mulberry32 } from "../../src/testing/simulator/mulberry32.js";
import type { RebalancingSimulator } from "../../src/testing/simulator/rebalancingSimulator.js";

/**
 * The data-safety soak: workers run random Tables writes through the rebalancing simulator
 * (random resets before and after the write, ServerBusy, OperationTimedOut, responses held
 * past the per-attempt timeout) against real Azurite, each on keys of its own, so the
 * expected state of every entity follows from what callers were told. Afterwards (and after
 * every failed write) the store is read directly, around the simulator, and compared.
 */
export interface SoakOptions {
  /** Operations in total (a `$batch` counts as one). */
  operations: number;
  /** Workers running at once, each owning its partition. */
  workers: number;
  /** Rows per worker partition. */
  rowsPerWorker: number;
  seed: number;
  /** A client through the simulator (installResilience is applied here). */
  client: TableClient;
  /** A client straight to Azurite, to read what is really stored. */
  direct: TableClient;
  simulator: RebalancingSimulator;
  /** Extra installResilience options (the soak's defaults are below). */
  install?: InstallResilienceOptions;
}

/** What the soak found; every `*Violations` figure must be 0. */
export interface SoakFigures {
  operations: number;
  byKind: Record<string, number>;
  acknowledged: number;
  failed: number;
  failedMarkedPossiblyApplied: number;
  /** Failed writes whose effect is in the store, all marked possibly applied (else they are violations). */
  failedButAppliedMarked: number;
  failedStopReasons: Record<string, number>;
  /** Ambiguous writes by how they were settled (from the observer events). */
  ambiguousWrites: Record<string, number>;
  attemptsAtSimulator: number;
  faultsInjected: Record<string, number>;
  entitiesChecked: number;
  /** Acknowledged writes whose result is not in the store. */
  acknowledgedMissingViolations: number;
  /** Writes reported failed, not marked possibly applied, whose effect is in the store. */
  failedButAppliedViolations: number;
  /** Operations still pending past their deadline (maxElapsedInMs + read-back + grace). */
  pendingPastDeadlineViolations: number;
  /** Stored states that are neither before nor after a failed write (should be impossible). */
  corruptViolations: number;
  elapsedInMs: number;
}

/** The soak's retry settings: fast enough for thousands of operations, still the package's behaviour. */
export const SOAK_RESILIENCE: InstallResilienceOptions = {
  retry: { strategy: "exponential", maxRetries: 6, baseDelayInMs: 40, minDelayInMs: 10, maxDelayInMs: 800 },
  tryTimeoutInMs: 1000,
  maxElapsedInMs: 10_000,
  ambiguousWrites: { readBackTimeoutInMs: 5000 },
  metrics: false,
};
const DEADLINE_GRACE_IN_MS = 3000;

/** The faults, drawn per request by the simulator's seeded generator. */
export function addSoakFaults(simulator: RebalancingSimulator): void {
  simulator.addFault({ name: "reset-before", kind: "resetBeforeForward", probability: 0.03 });
  simulator.addFault({ name: "reset-after", kind: "resetAfterForward", probability: 0.04 });
  simulator.addFault({ name: "busy", kind: "serverBusy", probability: 0.03 });
  simulator.addFault({ name: "timed-out", kind: "operationTimedOut", delayInMs: 30, probability: 0.02 });
  simulator.addFault({ name: "slow", kind: "slow", delayInMs: 1400, probability: 0.01 });
}

type Props = Record<string, string>;
/** An entity's state as the model knows it: absent, or present with its user properties. */
interface Known {
  present: boolean;
  props: Props;
  etag?: string | undefined;
}
type Kind = "insert" | "insertExisting" | "upsertReplace" | "upsertMerge" | "updateReplace" | "updateMerge" | "updateIfMatch" | "delete" | "batch";

const KINDS: Array<[Kind, number]> = [
  ["insert", 22],
  ["insertExisting", 3],
  ["upsertReplace", 12],
  ["upsertMerge", 10],
  ["updateReplace", 8],
  ["updateMerge", 8],
  ["updateIfMatch", 14],
  ["delete", 13],
  ["batch", 10],
];

export async function runSoak(o: SoakOptions): Promise<SoakFigures> {
  const events: AmbiguousWriteEvent[] = [];
  installResilience(o.client, {
    ...SOAK_RESILIENCE,
    ...o.install,
    observers: [{ onAmbiguousWrite: (e) => events.push(e) }],
  });
  const maxElapsed = (o.install?.maxElapsedInMs ?? SOAK_RESILIENCE.maxElapsedInMs) as number;
  const deadlineInMs = maxElapsed + DEADLINE_GRACE_IN_MS;
  const figures: SoakFigures = {
    operations: 0,
    byKind: {},
    acknowledged: 0,
    failed: 0,
    failedMarkedPossiblyApplied: 0,
    failedButAppliedMarked: 0,
    failedStopReasons: {},
    ambiguousWrites: {},
    attemptsAtSimulator: 0,
    faultsInjected: {},
    entitiesChecked: 0,
    acknowledgedMissingViolations: 0,
    failedButAppliedViolations: 0,
    pendingPastDeadlineViolations: 0,
    corruptViolations: 0,
    elapsedInMs: 0,
  };
  const started = performance.now();
  o.simulator.resetRecords();
  addSoakFaults(o.simulator);
  let remaining = o.operations;
  const take = (): boolean => remaining-- > 0;
  const models = new Map<string, Known>();
  await Promise.all(Array.from({ length: o.workers }, (_, w) => worker(o, w, take, models, figures, deadlineInMs)));
  o.simulator.clearFaults();
  figures.attemptsAtSimulator = o.simulator.totals.requests;
  figures.faultsInjected = { ...o.simulator.totals.faults };
  for (const e of events) figures.ambiguousWrites[e.result] = (figures.ambiguousWrites[e.result] ?? 0) + 1;

  // The final comparison: every entity of every worker, read around the simulator.
  const stored = new Map<string, TableEntityResult<Record<string, unknown>>>();
  for await (const entity of o.direct.listEntities()) stored.set(`${entity.partitionKey}|${entity.rowKey}`, entity);
  for (const [key, known] of models) {
    figures.entitiesChecked++;
    const entity = stored.get(key);
    if (!sameState(known, entity === undefined ? absent() : fromStored(entity))) figures.acknowledgedMissingViolations++;
  }
  figures.elapsedInMs = Math.round(performance.now() - started);
  return figures;
}

async function worker(
  o: SoakOptions,
  w: number,
  take: () => boolean,
  models: Map<string, Known>,
  figures: SoakFigures,
  deadlineInMs: number,
): Promise<void> {
  const random = mulberry32(o.seed * 1000 + w);
  const pk = `w${w}`;
  const rows = Array.from({ length: o.rowsPerWorker }, (_, i) => `r${i}`);
  for (const row of rows) models.set(`${pk}|${row}`, absent());
  const known = (row: string): Known => models.get(`${pk}|${row}`) as Known;
  let sequence = 0;
  while (take()) {
    sequence++;
    const kind = pick(random);
    figures.operations++;
    figures.byKind[kind] = (figures.byKind[kind] ?? 0) + 1;
    const props: Props = { v: `${w}-${sequence}`, s: random() < 0.5 ? "x".repeat(Math.floor(random() * 50)) : "O'Brien, \"quoted\"" };
    if (kind === "batch") {
      await batchStep(o, pk, rows, known, models, random, props, figures, deadlineInMs);
      continue;
    }
    const row = chooseRow(kind, rows, known, random);
    const before = known(row);
    const plan = planFor(kind, before, props, random() < 0.5 ? "Replace" : "Merge");
    const outcome = await watched(() => plan.run(o.client, pk, row), deadlineInMs, figures);
    if (outcome.ok) {
      figures.acknowledged++;
      models.set(`${pk}|${row}`, { ...plan.after, etag: outcome.etag });
      continue;
    }
    // A failure: is it what the caller was told? Read the store directly.
    const actual = await readDirect(o.direct, pk, row);
    judgeFailure(figures, outcome.error, before, plan.after, actual);
    models.set(`${pk}|${row}`, actual);
  }
}

/** One single-entity operation: what to send, and the state it leaves when it succeeds. */
interface Plan {
  after: Known;
  run(client: TableClient, pk: string, row: string): Promise<unknown>;
}

/** Inserts mostly go to absent rows, updates and deletes to present ones; the rest anywhere. */
function chooseRow(kind: Kind, rows: string[], known: (row: string) => Known, random: () => number): string {
  const wantPresent = kind === "insertExisting" || kind.startsWith("update") || kind === "delete";
  const wantAbsent = kind === "insert";
  const fitting = rows.filter((row) => (wantPresent ? known(row).present : wantAbsent ? !known(row).present : true));
  const from = fitting.length > 0 && random() < 0.9 ? fitting : rows;
  return from[Math.floor(random() * from.length)] as string;
}

function planFor(kind: Kind, before: Known, props: Props, mode: "Replace" | "Merge"): Plan {
  const entity = (pk: string, row: string) => ({ partitionKey: pk, rowKey: row, ...props });
  const merged: Known = { present: true, props: before.present ? { ...before.props, ...props } : { ...props } };
  const replaced: Known = { present: true, props: { ...props } };
  switch (kind) {
    case "insert":
    case "insertExisting":
      // On an existing row this is a 409 that must leave the row as it was.
      return { after: before.present ? before : replaced, run: (c, pk, row) => c.createEntity(entity(pk, row)) };
    case "upsertReplace":
      return { after: replaced, run: (c, pk, row) => c.upsertEntity(entity(pk, row), "Replace") };
    case "upsertMerge":
      return { after: merged, run: (c, pk, row) => c.upsertEntity(entity(pk, row), "Merge") };
    case "updateReplace":
      return { after: before.present ? replaced : before, run: (c, pk, row) => c.updateEntity(entity(pk, row), "Replace") };
    case "updateMerge":
      return { after: before.present ? merged : before, run: (c, pk, row) => c.updateEntity(entity(pk, row), "Merge") };
    case "updateIfMatch": {
      // Conditional on the ETag the model holds; without one (after a batch), unconditional.
      const etag = before.etag ?? "*";
      return {
        after: before.present ? (mode === "Merge" ? merged : replaced) : before,
        run: (c, pk, row) => c.updateEntity(entity(pk, row), mode, { etag }),
      };
    }
    case "delete":
      return { after: absent(), run: (c, pk, row) => c.deleteEntity(pk, row) };
    case "batch":
      throw new Error("batches are planned by batchStep");
  }
}

async function batchStep(
  o: SoakOptions,
  pk: string,
  rows: string[],
  known: (row: string) => Known,
  models: Map<string, Known>,
  random: () => number,
  props: Props,
  figures: SoakFigures,
  deadlineInMs: number,
): Promise<void> {
  // Two to four distinct rows; each action valid for the row's current state, so the batch should apply as a whole.
  const chosen = shuffle(rows, random).slice(0, 2 + Math.floor(random() * 3));
  const actions: TransactionAction[] = [];
  const after = new Map<string, Known>();
  for (const row of chosen) {
    const before = known(row);
    const entity = { partitionKey: pk, rowKey: row, ...props };
    const r = random();
    if (!before.present && r < 0.5) {
      actions.push(["create", entity]);
      after.set(row, { present: true, props: { ...props } });
    } else if (before.present && r < 0.3) {
      actions.push(["delete", entity]);
      after.set(row, absent());
    } else {
      actions.push(["upsert", entity, "Replace"]);
      after.set(row, { present: true, props: { ...props } });
    }
  }
  const outcome = await watched(() => o.client.submitTransaction(actions), deadlineInMs, figures);
  if (outcome.ok) {
    figures.acknowledged++;
    for (const [row, state] of after) models.set(`${pk}|${row}`, state);
    return;
  }
  // All or nothing: the rows must all be as before, or (only if marked) all as after.
  const actual = new Map<string, Known>();
  for (const row of chosen) actual.set(row, await readDirect(o.direct, pk, row));
  const allBefore = chosen.every((row) => sameState(known(row), actual.get(row) as Known));
  const allAfter = chosen.every((row) => sameState(after.get(row) as Known, actual.get(row) as Known));
  const marked = getRetryInfo(outcome.error)?.possiblyApplied === true;
  countFailure(figures, outcome.error, marked);
  if (!allBefore && !allAfter) figures.corruptViolations++;
  else if (!allBefore && !marked) figures.failedButAppliedViolations++;
  else if (!allBefore) figures.failedButAppliedMarked++;
  for (const row of chosen) models.set(`${pk}|${row}`, actual.get(row) as Known);
}

function judgeFailure(figures: SoakFigures, error: unknown, before: Known, after: Known, actual: Known): void {
  const marked = getRetryInfo(error)?.possiblyApplied === true;
  countFailure(figures, error, marked);
  const isBefore = sameState(before, actual);
  const isAfter = sameState(after, actual);
  if (!isBefore && !isAfter) {
    figures.corruptViolations++;
    if (process.env.SOAK_DEBUG) console.log(JSON.stringify({ error: String(error).slice(0, 200), before, after, actual }));
  } else if (!isBefore && !marked) figures.failedButAppliedViolations++;
  else if (!isBefore) figures.failedButAppliedMarked++;
}

function countFailure(figures: SoakFigures, error: unknown, marked: boolean): void {
  figures.failed++;
  if (marked) figures.failedMarkedPossiblyApplied++;
  const info = getRetryInfo(error);
  const reason = info?.stopReason ?? (isRestError(error) ? `status ${(error as RestError).statusCode ?? "none"}` : (error as Error)?.name ?? "unknown");
  const label = info?.stopReason === "permanent" ? `permanent ${(error as RestError).statusCode}` : reason;
  figures.failedStopReasons[label] = (figures.failedStopReasons[label] ?? 0) + 1;
}

type Outcome = { ok: true; etag?: string | undefined } | { ok: false; error: unknown };

/** Runs one operation; if it is still pending at its deadline, that is counted (it is still awaited). */
async function watched(run: () => Promise<unknown>, deadlineInMs: number, figures: SoakFigures): Promise<Outcome> {
  let settled = false;
  const timer = setTimeout(() => {
    if (!settled) figures.pendingPastDeadlineViolations++;
  }, deadlineInMs);
  try {
    const result = (await run()) as { etag?: string } | undefined;
    return { ok: true, etag: result?.etag };
  } catch (error) {
    return { ok: false, error };
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

async function readDirect(direct: TableClient, pk: string, row: string): Promise<Known> {
  try {
    return fromStored(await direct.getEntity<Record<string, unknown>>(pk, row));
  } catch (error) {
    if (isRestError(error) && error.statusCode === 404) return absent();
    throw error;
  }
}

function fromStored(entity: TableEntityResult<Record<string, unknown>>): Known {
  const props: Props = {};
  for (const [name, value] of Object.entries(entity)) {
    if (name === "partitionKey" || name === "rowKey" || name === "etag" || name === "timestamp" || name.startsWith("odata.")) continue;
    props[name] = String(value);
  }
  return { present: true, props, etag: entity.etag };
}

function absent(): Known {
  return { present: false, props: {} };
}

function sameState(a: Known, b: Known): boolean {
  if (a.present !== b.present) return false;
  if (!a.present) return true;
  const keys = Object.keys(a.props);
  return keys.length === Object.keys(b.props).length && keys.every((k) => a.props[k] === b.props[k]);
}

function pick(random: () => number): Kind {
  const total = KINDS.reduce((sum, [, weight]) => sum + weight, 0);
  let r = random() * total;
  for (const [kind, weight] of KINDS) {
    r -= weight;
    if (r < 0) return kind;
  }
  return "insert";
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** The figures as printed at the end of a soak. */
export function formatFigures(title: string, f: SoakFigures): string {
  return [
    `${title}: ${f.operations} operations in ${(f.elapsedInMs / 1000).toFixed(1)} s (${Math.round((f.operations * 1000) / f.elapsedInMs)}/s), ${f.attemptsAtSimulator} requests at the simulator`,
    `  by kind: ${JSON.stringify(f.byKind)}`,
    `  faults injected: ${JSON.stringify(f.faultsInjected)}`,
    `  acknowledged ${f.acknowledged}, failed ${f.failed} (${f.failedMarkedPossiblyApplied} marked possibly applied, ` +
      `${f.failedButAppliedMarked} of them really applied): ${JSON.stringify(f.failedStopReasons)}`,
    `  ambiguous writes settled: ${JSON.stringify(f.ambiguousWrites)}`,
    `  store read directly: ${f.entitiesChecked} entities checked`,
    `  acknowledged writes missing: ${f.acknowledgedMissingViolations}; reported failed but applied (unmarked): ${f.failedButAppliedViolations}; ` +
      `pending past deadline: ${f.pendingPastDeadlineViolations}; neither before nor after: ${f.corruptViolations}`,
  ].join("\n");
}
