import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STORAGE_OPERATIONS } from "../../../src/address/storageOperation.js";
import { AMBIGUOUS_WRITE_RESULTS } from "../../../src/ambiguousWrites/ambiguousWriteResult.js";
import { DEFAULT_DECORRELATED_JITTER_BACKOFF } from "../../../src/backoff/decorrelatedJitterBackoff.js";
import { DEFAULT_EXPONENTIAL_BACKOFF, exponentialDelayInMs } from "../../../src/backoff/exponentialBackoff.js";
import { DEFAULT_FIXED_BACKOFF } from "../../../src/backoff/fixedBackoff.js";
import { QUIET_IN_MS, SPREAD } from "../../../src/flow/scopeController.js";
import { classify } from "../../../src/classification/classify.js";
import { TIMEOUT_ERROR_CODES, TRANSIENT_ERROR_CODES } from "../../../src/classification/networkErrors.js";
import { OUTCOME_CLASSES, RETRIABLE_CLASSES, type OutcomeClass } from "../../../src/classification/outcomeClass.js";
import { DEFAULTS } from "../../../src/install/defaults.js";
import { SDK_RETRY_POLICY_NAMES } from "../../../src/install/installResilience.js";
import { SERVICE_PRESETS, type ServicePreset } from "../../../src/install/servicePresets.js";
import { CIRCUIT_STATES } from "../../../src/metrics/pacingMetrics.js";
import { DEFAULT_SECONDS_BUCKETS, OPERATION_OUTCOMES, THROTTLE_ERROR_CODES, THROTTLE_STATUSES } from "../../../src/metrics/metricNames.js";
import { OPEN_TELEMETRY_METER_NAME } from "../../../src/metrics/openTelemetryObserver.js";
import { ORDINARY_ANSWERS, OUTCOMES_BOUND_UP_FRONT, STOP_REASONS } from "../../../src/metrics/operationOutcome.js";
import type { AmbiguousWriteEvent } from "../../../src/observers/retryEvents.js";
import { LOCAL_WAIT_REASONS, reserveOf } from "../../../src/policies/callerPolicy.js";
import { BUDGET_POLL_IN_MS, SHORT_WAIT_IN_MS } from "../../../src/policies/decideNext.js";
import { DEFAULT_START_AZURITE_OPTIONS } from "../../../src/testing/azurite/startAzurite.js";
import { FAULT_KINDS } from "../../../src/testing/simulator/faultRule.js";
import { DEFAULT_SIMULATOR_OPTIONS } from "../../../src/testing/simulator/rebalancingSimulator.js";
import { DEFAULT_DEMO_OPTIONS } from "../../../tools/demo/demoOptions.js";
import { AZURE_PARTITION_TARGET_PER_SECOND, BASELINE_LABEL, RESILIENT_LABEL, type DemoSummary, type RunSummary } from "../../../tools/demo/demoSummary.js";
import { planFaults } from "../../../tools/demo/faultPlan.js";
import { formatDemoSummary } from "../../../tools/demo/formatDemoSummary.js";
import type { PartitionRow } from "../../../tools/demo/runStats.js";
import { DRAIN_TIMEOUT_IN_MS } from "../../../tools/demo/runDemo.js";

// Every default, preset, list of kinds, outcomes or names, and the demo's output format that
// README.md and docs/*.md quote, read from the page and compared with the code, so that neither
// can change without the other. A sentence reworded so that its figure is no longer found fails
// too: the pattern is then updated with it. Not here: docs/flow-control.md and
// docs/circuit-breaker.md (rewritten this round), docs/benchmarks.md (measured runs, dated).

const ROOT = new URL("../../../", import.meta.url);
/** A page as written (tables, code blocks). */
const raw = (page: string): string => readFileSync(new URL(page, ROOT), "utf8");
/** A page's prose with its line breaks and runs of spaces made one space, so that a quote may wrap. */
const prose = (page: string): string => raw(page).replace(/\s+/g, " ");

/** The capture groups of the one place `pattern` matches `text`: a figure that must be quoted, once. */
function quoted(text: string, pattern: RegExp): string[] {
  const matches = [...text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`))];
  expect(matches.length, `${pattern} should match exactly once`).toBe(1);
  return (matches[0] as RegExpMatchArray).slice(1) as string[];
}

/** The body rows of the markdown table whose header row starts with `header`, as trimmed cells. */
function table(text: string, header: string): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.startsWith(header));
  expect(start, `a table headed ${header}`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.slice(1, line.trimEnd().endsWith("|") ? line.trimEnd().length - 1 : undefined).split(" | ").map((cell) => cell.trim()));
  }
  return rows;
}

/** The row whose first cell is `first`. */
function row(rows: string[][], first: string): string[] {
  const found = rows.find((cells) => cells[0] === first);
  expect(found, `a row ${first}`).toBeDefined();
  return found as string[];
}

/** The words in backticks. */
const ticked = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
/** A number as the docs write it: `10_000`, `10,000` or `10000`. */
const num = (text: string): number => Number(text.replace(/[,_]/g, ""));
/** A list as prose writes it: `a`, `b` or `c`. */
const list = (text: string): string[] => text.split(/,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+/).map((word) => word.trim().replace(/^`|`$/g, ""));

/** Exponential backoff numbers, as a preset holds them. */
type Exponential = { baseDelayInMs: number; minDelayInMs: number; maxDelayInMs: number; jitter: number };
/** The wait before `retry` at the low (`randomValue` 0) or high (1) end of the jitter. */
const waitAt = (p: Exponential, retry: number, randomValue: 0 | 1): number =>
  exponentialDelayInMs(retry, { base: p.baseDelayInMs, min: p.minDelayInMs, max: p.maxDelayInMs, jitter: p.jitter, randomValue });
const lowEnd = (p: Exponential, retry: number): number => waitAt(p, retry, 0);
const highEnd = (p: Exponential, retry: number): number => waitAt(p, retry, 1);
/** A preset's waits at the low end of the jitter, retry 1 to maxRetries. */
const lowEndWaits = (retry: ServicePreset["retry"]): number[] => Array.from({ length: retry.maxRetries }, (_, i) => lowEnd(retry, i + 1));

const { table: TABLE, blob: BLOB, queue: QUEUE } = SERVICE_PRESETS;

/** `AmbiguousWriteEvent["operation"]`, every value: the type checker holds this list to the type (no runtime list exists). */
const AMBIGUOUS_WRITE_OPERATIONS = ["insert_entity", "update_entity", "delete_entity", "upsert_entity", "batch", "other"] as const satisfies ReadonlyArray<AmbiguousWriteEvent["operation"]>;
const everyWriteOperation: Exclude<AmbiguousWriteEvent["operation"], (typeof AMBIGUOUS_WRITE_OPERATIONS)[number]> extends never ? true : false = true;
void everyWriteOperation;
const TRANSIENT = TABLE.backoff.transient as NonNullable<typeof TABLE.backoff.transient>;

describe("the presets, wherever they are quoted", () => {
  it("README's quick start: the table preset's retries, base and deadline", () => {
    const [retries, base, deadline] = quoted(raw("README.md"), /\/\/ table preset: (\d+) retries, (\d+) ms base, (\d+) s deadline/);
    expect([num(retries as string), num(base as string), num(deadline as string) * 1000]).toEqual([TABLE.retry.maxRetries, TABLE.retry.baseDelayInMs, TABLE.maxElapsedInMs]);
  });

  it("configuration.md: the options table's per-service columns", () => {
    const rows = table(raw("docs/configuration.md"), "| option | table | blob | queue |");
    const [, ...elapsed] = row(rows, "`maxElapsedInMs`");
    expect(elapsed.slice(0, 3).map(num)).toEqual([TABLE.maxElapsedInMs, BLOB.maxElapsedInMs, QUEUE.maxElapsedInMs]);
    const [, ...timeout] = row(rows, "`tryTimeoutInMs`");
    expect(timeout.slice(0, 3)).toEqual([String(TABLE.tryTimeoutInMs), `${BLOB.tryTimeoutInMs} (none)`, String(QUEUE.tryTimeoutInMs)]);
    const [, ...hint] = row(rows, "`maxRetryAfterInMs`");
    expect(hint.slice(0, 3).map(num)).toEqual([TABLE.retry.maxDelayInMs, BLOB.retry.maxDelayInMs, QUEUE.retry.maxDelayInMs]);
  });

  it("configuration.md: the exponential presets and their waits at the low end of the jitter", () => {
    const rows = table(raw("docs/configuration.md"), "| service | maxRetries | baseDelayInMs |");
    expect(rows.map((cells) => cells[0])).toEqual(["table", "queue", "blob"]);
    for (const [service, maxRetries, base, min, max, jitter, waits] of rows) {
      const { retry } = SERVICE_PRESETS[service as keyof typeof SERVICE_PRESETS];
      expect([maxRetries, base, min, max, jitter].map((cell) => num(cell as string)), service).toEqual([retry.maxRetries, retry.baseDelayInMs, retry.minDelayInMs, retry.maxDelayInMs, retry.jitter]);
      expect((waits as string).split(", ").map(num), service).toEqual(lowEndWaits(retry));
    }
  });

  it("configuration.md and retry.md: transient's own backoff from 40 ms, and its first waits", () => {
    for (const service of ["table", "queue", "blob"] as const) expect(SERVICE_PRESETS[service].backoff.transient, service).toEqual(TRANSIENT);
    const ranges = (text: string) => text.split(", ").map((range) => range.split("-").map(num));
    const expected = (count: number) => Array.from({ length: count }, (_, i) => [lowEnd(TRANSIENT, i + 1), highEnd(TRANSIENT, i + 1)]);
    const [from, configWaits] = quoted(prose("docs/configuration.md"), /its own, from (\d+) ms \(((?:\d+-\d+, )+\d+-\d+) ms \.\.\.\)/);
    expect(num(from as string)).toBe(TRANSIENT.baseDelayInMs);
    expect(ranges(configWaits as string)).toEqual(expected(3));
    const [base, min, max, jitter, retryWaits] = quoted(
      prose("docs/retry.md"),
      /its own in every preset: base (\d+), min (\d+), max (\d+), jitter ([\d.]+), i\.e\. waits of ((?:\d+-\d+, )+\d+-\d+) ms/,
    );
    expect([base, min, max, jitter].map((cell) => num(cell as string))).toEqual([TRANSIENT.baseDelayInMs, TRANSIENT.minDelayInMs, TRANSIENT.maxDelayInMs, TRANSIENT.jitter]);
    expect(ranges(retryWaits as string)).toEqual(expected(4));
    const [first] = quoted(prose("docs/retry.md"), /the reset strategy's \*first\* retry \((\d+-\d+) ms with the preset\)/);
    expect(ranges(first as string)).toEqual(expected(1));
  });

  it("retry.md: the service presets table, the retry policy's table and the table preset's waits", () => {
    const text = raw("docs/retry.md");
    const rows = table(text, "| service | strategy | maxRetries |");
    expect(rows.map((cells) => cells[0])).toEqual(["table", "queue", "blob"]);
    for (const [service, strategy, maxRetries, base, min, max, jitter, elapsed, tryTimeout] of rows) {
      const preset = SERVICE_PRESETS[service as keyof typeof SERVICE_PRESETS];
      const { retry } = preset;
      expect(strategy).toBe("exponential");
      expect([maxRetries, base, min, max, jitter, elapsed].map((cell) => num(cell as string)), service).toEqual([
        retry.maxRetries, retry.baseDelayInMs, retry.minDelayInMs, retry.maxDelayInMs, retry.jitter, preset.maxElapsedInMs,
      ]);
      expect(tryTimeout, service).toBe(preset.tryTimeoutInMs === 0 ? "0 (none)" : String(preset.tryTimeoutInMs));
    }
    const policy = table(text, "| option | default | meaning |");
    expect(row(policy, "`maxElapsedInMs`")[1]).toBe(`${TABLE.maxElapsedInMs} (table, queue), ${BLOB.maxElapsedInMs} (blob)`);
    expect(row(policy, "`tryTimeoutInMs`")[1]).toBe(`${TABLE.tryTimeoutInMs} (table, queue), ${BLOB.tryTimeoutInMs} = none (blob)`);
    expect(QUEUE.maxElapsedInMs).toBe(TABLE.maxElapsedInMs);
    expect(QUEUE.tryTimeoutInMs).toBe(TABLE.tryTimeoutInMs);
    const [waits, four, fifth, five, middleFour] = quoted(
      prose("docs/retry.md"),
      /the \*low\* end of the jitter the table preset waits ((?:\d+, )+\d+ and \d+) ms \(([\d.]+) s of cover in four retries\), then (\d+) ms \((\d+) s in five\): a partition offline for 10 s is ridden out with a retry to spare \(from the middle of the jitter up, in four: ([\d.]+) s\)/,
    );
    const low = lowEndWaits(TABLE.retry);
    expect(list(waits as string).map(num)).toEqual(low.slice(0, 4));
    expect(num(fifth as string)).toBe(low[4]);
    const cover = (waitsInMs: number[], retries: number) => waitsInMs.slice(0, retries).reduce((sum, wait) => sum + wait, 0) / 1000;
    expect([num(four as string), num(five as string)]).toEqual([Math.round(cover(low, 4) * 10) / 10, Math.round(cover(low, 5))]);
    // Ridden out at the low end within the retries, with one left: the fifth lands past 10 s.
    expect([cover(low, 5) > 10, TABLE.retry.maxRetries > 5]).toEqual([true, true]);
    const middle = Array.from({ length: TABLE.retry.maxRetries }, (_, i) => (lowEnd(TABLE.retry, i + 1) + highEnd(TABLE.retry, i + 1)) / 2);
    expect(num(middleFour as string)).toBe(cover(middle, 4));
    // The SDK default's means, which the prose says the preset's waits keep: 1000 x 2^n, half fixed and half random.
    const [means] = quoted(prose("docs/retry.md"), /The waits' means are the SDK default's \(((?:\d+, )+\d+) ms;/);
    expect(list(means as string).map(num)).toEqual(middle.slice(0, 4));
  });

  it("migration.md: the presets beside the SDKs' defaults", () => {
    const core = table(raw("docs/migration.md"), "| `retryOptions` |");
    expect(row(core, "`maxRetries`")[2]).toBe(`\`retry.maxRetries\` (table preset: ${TABLE.retry.maxRetries})`);
    expect(row(core, "`retryDelayInMs`")[2]).toBe(`\`retry.baseDelayInMs\` (table preset: ${TABLE.retry.baseDelayInMs})`);
    expect(row(core, "`maxRetryDelayInMs`")[2]).toBe(`\`retry.maxDelayInMs\` (table preset: ${TABLE.retry.maxDelayInMs})`);
    const [low, high] = quoted(row(core, "`retryDelayInMs`")[3] as string, /Rand\(([\d.]+), ([\d.]+)\)/);
    expect([num(low as string), num(high as string)]).toEqual([1 - TABLE.retry.jitter, 1 + TABLE.retry.jitter]);

    const storage = table(raw("docs/migration.md"), "| `StorageRetryOptions` |");
    const [jitter, blobFloor, queueFloor] = quoted(row(storage, "`retryPolicyType: EXPONENTIAL`")[3] as string, /±(\d+) % jitter and a floor \(blob preset: (\d+) ms, queue: (\d+) ms\)/);
    expect([num(jitter as string) / 100, num(blobFloor as string), num(queueFloor as string)]).toEqual([BLOB.retry.jitter, BLOB.retry.minDelayInMs, QUEUE.retry.minDelayInMs]);
    expect(row(storage, "`maxTries`")[2]).toBe(`\`retry.maxRetries = maxTries - 1\` (blob preset: ${BLOB.retry.maxRetries}, queue: ${QUEUE.retry.maxRetries})`);
    expect(row(storage, "`retryDelayInMs`")[2]).toBe(`\`retry.baseDelayInMs\` (blob ${BLOB.retry.baseDelayInMs}, queue ${QUEUE.retry.baseDelayInMs}), or \`delayInMs\` for fixed`);
    expect(row(storage, "`maxRetryDelayInMs`")[2]).toBe(`\`retry.maxDelayInMs\` (blob ${BLOB.retry.maxDelayInMs}, queue ${QUEUE.retry.maxDelayInMs})`);
    expect(row(storage, "`tryTimeoutInMs`")[2]).toBe(`\`tryTimeoutInMs\` (blob ${BLOB.tryTimeoutInMs} = none, queue ${QUEUE.tryTimeoutInMs})`);
  });

  it("getting-started.md: a queue send that exhausted its retries made the queue preset's attempts", () => {
    const [attempts] = quoted(raw("docs/getting-started.md"), /\{ attempts: (\d+), classes: \["throttled", \.\.\.\], stopReason: "retries-exhausted" \}/);
    expect(num(attempts as string)).toBe(QUEUE.retry.maxRetries + 1);
  });

  it("configuration.md and retry.md: why each preset's numbers, in prose", () => {
    const config = prose("docs/configuration.md");
    const [queueDeadline, queueAttempt] = quoted(config, /rides a 10 s outage out within the (\d+) s deadline\. (\d+) s per attempt is the Queue service's own maximum/);
    expect([num(queueDeadline as string) * 1000, num(queueAttempt as string) * 1000]).toEqual([QUEUE.maxElapsedInMs, QUEUE.tryTimeoutInMs]);
    const [blobDeadline, blobWaits] = quoted(config, /so there is no per-attempt timeout by default and the deadline is (\d+) minutes\. Waits grow to (\d+) s\./);
    expect([BLOB.tryTimeoutInMs, num(blobDeadline as string) * 60_000, num(blobWaits as string) * 1000]).toEqual([0, BLOB.maxElapsedInMs, BLOB.retry.maxDelayInMs]);
    const retry = prose("docs/retry.md");
    const [third] = quoted(retry, /not the operation's third \((\d\.\d-\d\.\d) s with one backoff for all\)/);
    const seconds = (ms: number) => (Math.round(ms / 100) / 10).toFixed(1);
    expect(third).toBe(`${seconds(lowEnd(TABLE.retry, 3))}-${seconds(highEnd(TABLE.retry, 3))}`);
    const [first] = quoted(retry, /the retry goes out on a new one; waiting (\d+) ms for it is pure latency/);
    expect(num(first as string)).toBe(lowEnd(TABLE.retry, 1));
    const [six, low, high] = quoted(retry, /the waits still double \((\w+) of them cover about (\d+)-(\d+) s\)/);
    const waits = Array.from({ length: TABLE.retry.maxRetries }, (_, i) => [lowEnd(TRANSIENT, i + 1), highEnd(TRANSIENT, i + 1)]);
    expect(six).toBe(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight"][TABLE.retry.maxRetries]);
    expect([num(low as string), num(high as string)]).toEqual([0, 1].map((end) => Math.round(waits.reduce((sum, pair) => sum + (pair[end] as number), 0) / 1000)));
    const [perAttempt] = quoted(retry, /(\d+) s per attempt matches the Table service's own server-side operation timeout/);
    expect(num(perAttempt as string) * 1000).toBe(TABLE.tryTimeoutInMs);
  });

  it("troubleshooting.md: the deadlines a call gives up after", () => {
    const [tables, blob] = quoted(prose("docs/troubleshooting.md"), /Calls fail after about (\d+) s \(Tables, Queue\) or (\d+) min \(Blob\)/);
    expect([num(tables as string) * 1000, num(blob as string) * 60_000]).toEqual([TABLE.maxElapsedInMs, BLOB.maxElapsedInMs]);
    expect(QUEUE.maxElapsedInMs).toBe(TABLE.maxElapsedInMs);
  });
});

describe("the factories' defaults (DEFAULTS), wherever they are quoted", () => {
  it("retry.md: the strategies' signatures", () => {
    const text = prose("docs/retry.md");
    const [retries, delay] = quoted(text, /`fixedBackoff\(\{ maxRetries = (\d+), delayInMs = (\d+) \}\)`/);
    expect({ maxRetries: num(retries as string), delayInMs: num(delay as string) }).toEqual(DEFAULT_FIXED_BACKOFF);
    const exponential = quoted(text, /`exponentialBackoff\(\{ maxRetries = (\d+), baseDelayInMs = (\d+), minDelayInMs = (\d+), maxDelayInMs = (\d+), jitter = ([\d.]+) \}\)`/);
    expect(exponential.map(num)).toEqual([DEFAULT_EXPONENTIAL_BACKOFF.maxRetries, DEFAULT_EXPONENTIAL_BACKOFF.baseDelayInMs, DEFAULT_EXPONENTIAL_BACKOFF.minDelayInMs, DEFAULT_EXPONENTIAL_BACKOFF.maxDelayInMs, DEFAULT_EXPONENTIAL_BACKOFF.jitter]);
    const decorrelated = quoted(text, /`decorrelatedJitterBackoff\(\{ maxRetries = (\d+), baseDelayInMs = (\d+), maxDelayInMs = (\d+) \}\)`/);
    expect(decorrelated.map(num)).toEqual([DEFAULT_DECORRELATED_JITTER_BACKOFF.maxRetries, DEFAULT_DECORRELATED_JITTER_BACKOFF.baseDelayInMs, DEFAULT_DECORRELATED_JITTER_BACKOFF.maxDelayInMs]);
    // The worked check of the formula.
    const [z, zmin, zmax, retry, low, high, capped, cap] = quoted(
      text,
      /Worked check \(z = (\d+), zmin = (\d+), zmax = (\d+)\): retry (\d+) waits (\d+) ms at the low end of the random range and (\d+) ms at the high end; retry (\d+) is capped at (\d+) ms/,
    ).map(num) as number[];
    const p = { baseDelayInMs: z as number, minDelayInMs: zmin as number, maxDelayInMs: zmax as number, jitter: DEFAULT_EXPONENTIAL_BACKOFF.jitter };
    expect([lowEnd(p, retry as number), highEnd(p, retry as number), lowEnd(p, capped as number)]).toEqual([low, high, cap]);
    expect(cap).toBe(zmax);
  });

  it("configuration.md: a fixed config's defaults, the retry budget, the caller's reserve and short slot, the metrics options", () => {
    const text = prose("docs/configuration.md");
    const [retries, delay] = quoted(text, /a `"fixed"` config defaults to (\d+) retries of (\d+) ms/);
    expect({ maxRetries: num(retries as string), delayInMs: num(delay as string) }).toEqual(DEFAULT_FIXED_BACKOFF);
    const [ratio, floor, window] = quoted(text, /Caps retries per client at (\d+) % of requests plus (\d+) retries\/s over (\d+) s \(`DEFAULTS\.retryBudget`\)/);
    expect({ retryRatio: num(ratio as string) / 100, minRetriesPerSecond: num(floor as string), windowInMs: num(window as string) * 1000 }).toEqual(DEFAULTS.retryBudget);
    quoted(text, /only its spare slots \(a tenth of N, at least 1, kept free\)/);
    expect([reserveOf(1), reserveOf(9), reserveOf(10), reserveOf(40)]).toEqual([1, 1, 1, 4]);
    const [slot] = quoted(text, /never waits longer than a short paced slot \((\d+) ms\)/);
    expect(num(slot as string)).toBe(SHORT_WAIT_IN_MS);
    const [prefix, partitionLabel, firstBucket, lastBucket] = quoted(
      text,
      /`prefix` \(`"([a-z_]+)"`\), `partitionLabel` \(`(false|true)`\), `bucketsInSeconds` \((\d+) ms … (\d+) s\)/,
    );
    expect([prefix, partitionLabel === "true"]).toEqual([DEFAULTS.metrics.prefix, DEFAULTS.metrics.partitionLabel]);
    expect([num(firstBucket as string) / 1000, num(lastBucket as string)]).toEqual([DEFAULTS.metrics.bucketsInSeconds[0], DEFAULTS.metrics.bucketsInSeconds.at(-1)]);
  });

  it("configuration.md: the circuitBreaker table", () => {
    const rows = table(raw("docs/configuration.md"), "| option | default | meaning |");
    const value = (option: string) => num(row(rows, `\`circuitBreaker.${option}\``)[1] as string);
    const breaker = DEFAULTS.partitionBreaker;
    expect({
      consecutiveFailures: value("consecutiveFailures"),
      resetTimeoutInMs: value("resetTimeoutInMs"),
      maxScopes: value("maxScopes"),
      idleTtlInMs: value("idleTtlInMs"),
    }).toEqual({ consecutiveFailures: breaker.consecutiveFailures, resetTimeoutInMs: breaker.resetTimeoutInMs, maxScopes: breaker.maxScopes, idleTtlInMs: breaker.idleTtlInMs });
    expect(row(rows, "`circuitBreaker.pacing`")[1]).toBe(breaker.pacing ? "on" : "off");
    const [quiet] = quoted(row(rows, "`circuitBreaker.consecutiveFailures`")[2] as string, /with no success for (\d+) ms/);
    expect(num(quiet as string)).toBe(QUIET_IN_MS);
    // An account's answer tells for SPREAD partitions: it is probed that many times as often.
    const [times, every] = quoted(row(rows, "`circuitBreaker.resetTimeoutInMs`")[2] as string, /probed (\w+) times as often \(every (\d+) ms\)/);
    expect([times, num(every as string)]).toEqual([["zero", "one", "two", "three", "four"][SPREAD], breaker.resetTimeoutInMs / SPREAD]);
  });

  it("configuration.md: the policy's own defaults, and the SDK retry policies installResilience removes (migration.md too)", () => {
    const text = prose("docs/configuration.md");
    const [elapsed, tryTimeout] = quoted(text, /`maxElapsedInMs` \(default (\d+)\), `tryTimeoutInMs` \(default (\d+)\)/);
    expect({ maxElapsedInMs: num(elapsed as string), tryTimeoutInMs: num(tryTimeout as string) }).toEqual(DEFAULTS.retryPolicy);
    const [removed] = quoted(text, /`installResilience` removes the Retry phase and the policies named ((?:`\w+`, )+`\w+` and `\w+`)/);
    expect(ticked(removed as string)).toEqual(SDK_RETRY_POLICY_NAMES);
    const [named] = quoted(prose("docs/migration.md"), /policy named ((?:`\w+`, )+`\w+` or `\w+`) wherever it sits/);
    expect(ticked(named as string)).toEqual(SDK_RETRY_POLICY_NAMES);
  });

  it("retry.md and data-safety.md: the retry budget, the read-back's timeout, the budget's polls", () => {
    const budget = DEFAULTS.retryBudget;
    const [ratio, floor, window] = quoted(raw("docs/retry.md"), /\| `retryBudget` \| a budget per policy: (\d+) % of requests \+ (\d+)\/s over (\d+) s \|/);
    expect({ retryRatio: num(ratio as string) / 100, minRetriesPerSecond: num(floor as string), windowInMs: num(window as string) * 1000 }).toEqual(budget);
    const rows = table(raw("docs/data-safety.md"), "| option | default | meaning |");
    expect({ retryRatio: num(row(rows, "`retryRatio`")[1] as string), minRetriesPerSecond: num(row(rows, "`minRetriesPerSecond`")[1] as string), windowInMs: num(row(rows, "`windowInMs`")[1] as string) }).toEqual(budget);
    const text = prose("docs/data-safety.md");
    const [reserve, share] = quoted(text, /within \*\*(\d+) \+ ([\d.]+) x its requests\*\* \(defaults\)/);
    expect([num(reserve as string), num(share as string)]).toEqual([(budget.minRetriesPerSecond * budget.windowInMs) / 1000, budget.retryRatio]);
    const [readBack] = quoted(text, /`readBackTimeoutInMs` \(default (\d+)\)/);
    expect(num(readBack as string)).toBe(DEFAULTS.ambiguousWrites.readBackTimeoutInMs);
    // decideNext polls an empty budget every BUDGET_POLL_IN_MS x (1 + a draw in [0, 1)).
    const [low, high] = quoted(text, /asking again every (\d+)-(\d+) ms, until a retry is free again/);
    expect([num(low as string), num(high as string)]).toEqual([BUDGET_POLL_IN_MS, 2 * BUDGET_POLL_IN_MS]);
  });

  it("metrics.md and getting-started.md: the metrics options and the metrics server's defaults", () => {
    const rows = table(raw("docs/metrics.md"), "| Option (`installResilience(client, { metrics })`) |");
    expect(row(rows, "`metrics.prefix`")[1]).toBe(`\`"${DEFAULTS.metrics.prefix}"\``);
    expect(row(rows, "`metrics.partitionLabel`")[1]).toBe(`\`${DEFAULTS.metrics.partitionLabel}\``);
    const [topN, minThrottles] = quoted(row(rows, "`metrics.partitionLabel`")[2] as string, /`\{ topN: (\d+), minThrottles: (\d+) \}`/);
    expect([num(topN as string), num(minThrottles as string)]).toEqual([DEFAULTS.metrics.partitionTopN, DEFAULTS.metrics.partitionMinThrottles]);
    const [buckets] = quoted(row(rows, "`metrics.bucketsInSeconds`")[2] as string, /: `([\d., ]+)`\./);
    expect((buckets as string).split(", ").map(num)).toEqual(DEFAULT_SECONDS_BUCKETS);
    expect(row(rows, "`metrics.bucketsInSeconds`")[1]).toBe(`${DEFAULT_SECONDS_BUCKETS[0] as number * 1000} ms … ${DEFAULT_SECONDS_BUCKETS.at(-1)} s`);
    const [minThrottlesAgain] = quoted(prose("docs/metrics.md"), /has been throttled `minThrottles` times \(default (\d+)\)/);
    expect(num(minThrottlesAgain as string)).toBe(DEFAULTS.metrics.partitionMinThrottles);

    const server = DEFAULTS.metricsServer;
    const [port, host, path] = quoted(prose("docs/metrics.md"), /`startMetricsServer\(\{ port = (\d+), host = "([\d.]+)", registry\?, path = "([^"]+)" \}\)`/);
    expect({ port: num(port as string), host, path }).toEqual(server);
    const started = raw("docs/getting-started.md");
    const [given, defaultHost] = quoted(started, /startMetricsServer\(\{ registry, port: (\d+) \}\); \/\/ ([\d.]+) unless you pass host/);
    expect([num(given as string), defaultHost]).toEqual([server.port, server.host]);
    const [url] = quoted(started, /console\.log\(`scrape \$\{metrics\.url\}`\); \/\/ (\S+)/);
    expect(url).toBe(`http://${server.host}:${server.port}${server.path}`);
  });

  it("testing.md: the simulator's and the launcher's defaults", () => {
    const text = prose("docs/testing.md");
    const [records] = quoted(text, /the newest `maxRecords`, ([\d,]+) by default/);
    expect(num(records as string)).toBe(DEFAULT_SIMULATOR_OPTIONS.maxRecords);
    const [services] = quoted(text, /one Azurite process per service you ask for \(((?:`"\w+"`, )+`"\w+"`); all three by default\)/);
    expect(ticked(services as string).map((s) => s.replaceAll('"', ""))).toEqual([...DEFAULT_START_AZURITE_OPTIONS.services]);
  });

  it("troubleshooting.md: the probe period, the short paced slot", () => {
    const text = prose("docs/troubleshooting.md");
    const [probe] = quoted(text, /\(probed every (\d+) ms\)/);
    expect(num(probe as string)).toBe(DEFAULTS.partitionBreaker.resetTimeoutInMs);
    const [slot] = quoted(text, /\(beyond a (\d+) ms paced slot\)/);
    expect(num(slot as string)).toBe(SHORT_WAIT_IN_MS);
  });
});

describe("the versions required, as package.json declares them", () => {
  const pkg = JSON.parse(raw("package.json")) as { engines: { node: string }; peerDependencies: Record<string, string> };
  /** `^1.10.0` as the README shortens it: `^1.10`. */
  const short = (range: string) => range.replace(/(?:\.0)+$/, "");

  it("README: Node and the peers' lowest versions, and the Dependencies table's ranges", () => {
    const text = prose("README.md");
    const [node, core, tables, blob, queue] = quoted(
      text,
      /Requires Node\.js >= (\d+) and `@azure\/core-rest-pipeline` ([\d.]+)\+, with any of `@azure\/data-tables` ([\d.]+)\+, `@azure\/storage-blob` ([\d.]+)\+ and `@azure\/storage-queue` ([\d.]+)\+/,
    );
    expect(`>=${node}`).toBe(pkg.engines.node);
    const lowest = (name: string) => short(pkg.peerDependencies[name] as string).replace("^", "");
    expect([core, tables, blob, queue]).toEqual(["@azure/core-rest-pipeline", "@azure/data-tables", "@azure/storage-blob", "@azure/storage-queue"].map(lowest));
    const rows = table(raw("README.md"), "| package | kind | what for |");
    for (const name of ["@azure/core-rest-pipeline", "prom-client", "@opentelemetry/api"]) {
      expect(rows.some(([first]) => first === `\`${name}\` ${short(pkg.peerDependencies[name] as string)}`), name).toBe(true);
    }
  });

  it("getting-started.md: Node, and the supported ranges with their oldest tested releases", () => {
    const [node] = quoted(prose("docs/getting-started.md"), /``` Node\.js (\d+) or later\. The package ships ESM and CommonJS/);
    expect(`>=${node}`).toBe(pkg.engines.node);
    const rows = table(raw("docs/getting-started.md"), "| peer | supported | oldest tested |");
    expect(rows).toHaveLength(4);
    for (const [peer, supported, oldest] of rows) {
      const range = pkg.peerDependencies[ticked(peer as string)[0] as string];
      expect(supported, peer).toBe(`\`${range}\``);
      expect(oldest, peer).toBe(range?.replace("^", ""));
    }
  });
});

describe("lists of kinds, classes, outcomes and names, wherever they are quoted", () => {
  it("README and getting-started.md: the outcome classes, and the ones retried", () => {
    const [readme] = quoted(prose("README.md"), /as ((?:`[a-z]+`, )+`[a-z]+` or `[a-z]+`); - \*\*retry\*\*/);
    expect(list(readme as string)).toEqual(OUTCOME_CLASSES);
    const [classes, retried] = quoted(prose("docs/getting-started.md"), /Every attempt is classified \(((?:`[a-z]+`, )+`[a-z]+`)\); only ((?:`[a-z]+`, )+`[a-z]+` and `[a-z]+`) are retried/);
    expect(list(classes as string)).toEqual(OUTCOME_CLASSES);
    expect(list(retried as string)).toEqual(RETRIABLE_CLASSES);
  });

  it("retry.md: the classification table, against classify()", () => {
    const rows = table(raw("docs/retry.md"), "| outcome | class | retried |");
    let checked = 0;
    for (const [outcome, cls, retried] of rows) {
      const expected = ticked(cls as string)[0] as OutcomeClass;
      expect(retried, outcome).toBe(expected === "success" ? "–" : expected === "aborted" ? "never" : RETRIABLE_CLASSES.includes(expected as never) ? "yes" : "no");
      const text = outcome as string;
      if (text.startsWith("network error")) continue; // the lists below
      const statuses = [...text.matchAll(/\b([1-5])xx\b/g)].flatMap((m) => [Number(m[1]) * 100, Number(m[1]) * 100 + 99]);
      statuses.push(...[...text.matchAll(/\b([1-5]\d\d)\b/g)].map((m) => Number(m[1])));
      const codes = ticked(text).map((code) => code.replace(/^x-ms-error-code: /, ""));
      for (const status of statuses) {
        for (const errorCode of codes.length > 0 ? codes : [undefined]) {
          expect(classify({ status, errorCode }), `${text}: ${status} ${errorCode ?? ""}`).toBe(expected);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("retry.md: the network error codes, both lists, as the classifier has them", () => {
    const rows = table(raw("docs/retry.md"), "| outcome | class | retried |");
    const network = rows.filter(([outcome]) => (outcome as string).startsWith("network error"));
    expect(network.map(([, cls]) => cls)).toEqual(["`timeout`", "`transient`"]);
    const codes = (text: string) => ticked(text).filter((code) => /^[A-Z][A-Z_*]+$/.test(code));
    const expand = (documented: string[], known: ReadonlySet<string>) =>
      [...known].filter((code) => documented.some((pattern) => new RegExp(`^${pattern.replaceAll("*", "[A-Z_]+")}$`).test(code))).sort();
    const [timeoutRow, transientRow] = network.map(([outcome]) => codes(outcome as string));
    expect(expand(timeoutRow as string[], TIMEOUT_ERROR_CODES)).toEqual([...TIMEOUT_ERROR_CODES].sort());
    expect((timeoutRow as string[]).filter((code) => !code.includes("*")).every((code) => TIMEOUT_ERROR_CODES.has(code))).toBe(true);
    const transient = (transientRow as string[]).filter((code) => code !== "HPE_*");
    expect([...transient].sort()).toEqual([...TRANSIENT_ERROR_CODES].sort());
    for (const code of [...(timeoutRow as string[]), ...(transientRow as string[])]) {
      if (code.includes("*")) continue;
      expect(classify({ error: Object.assign(new Error("x"), { code }) }), code).toBe(TIMEOUT_ERROR_CODES.has(code) ? "timeout" : "transient");
    }
  });

  it("classification.md: the Blob and Queue codes table, against classify()", () => {
    const rows = table(raw("docs/classification.md"), "| status | `x-ms-error-code` | class | notes |");
    expect(rows.length).toBeGreaterThan(8);
    for (const [statusCell, codeCell, cls] of rows) {
      const codes = codeCell === "any" ? [undefined, "SomethingElse"] : ticked(codeCell as string);
      for (const status of (statusCell as string).split(", ").map(num)) {
        for (const errorCode of codes) expect(classify({ status, errorCode }), `${status} ${errorCode ?? ""}`).toBe(ticked(cls as string)[0]);
      }
    }
  });

  it("metrics.md: every label value list", () => {
    const labels = table(raw("docs/metrics.md"), "| Label | Values |");
    const values = (label: string) => row(labels, `\`${label}\``)[1] as string;
    expect(ticked(values("service"))).toEqual(["table", "blob", "queue"]);
    expect(ticked(values("outcome")).filter((value) => OPERATION_OUTCOMES.includes(value as never))).toEqual([...OPERATION_OUTCOMES]);
    expect(ticked(values("class"))).toEqual([...OUTCOME_CLASSES, "circuit_open"]);
    const [retries, waits] = values("reason").split(". On ");
    expect(ticked(retries as string).filter((value) => value !== "retries_total" && value !== "retry_delay_seconds")).toEqual([...RETRIABLE_CLASSES, "circuit_open"]);
    expect(ticked(waits as string).filter((value) => !value.includes("_"))).toEqual(LOCAL_WAIT_REASONS);
    expect(ticked(values("status"))).toEqual([...THROTTLE_STATUSES.map(String), "other", "none"]);
    expect(ticked(values("error_code"))).toEqual([...THROTTLE_ERROR_CODES, "other", "none"]);
    expect(ticked(values("state`, `to"))).toEqual(CIRCUIT_STATES);
    expect(ticked(values("result"))).toEqual(AMBIGUOUS_WRITE_RESULTS);
  });

  it("metrics.md: the operation names, service by service", () => {
    const text = prose("docs/metrics.md");
    const named = ["Tables", "Blob", "Queue"].flatMap((service) => {
      const [bullet] = quoted(text, new RegExp(`- \\*\\*${service}\\*\\*: (.*?)(?= - \\*\\*|- Anything else)`));
      // The operation names, not the URL shapes and headers quoted beside them.
      return ticked(bullet as string).filter((word) => word === "batch" || /^[a-z]+(?:_[a-z]+)+$/.test(word));
    });
    const [anything] = quoted(text, /- Anything else \([^)]*\): `([a-z]+)`\./);
    expect(new Set([...named, anything])).toEqual(new Set(STORAGE_OPERATIONS));
  });

  it("metrics.md: the answers table is ORDINARY_ANSWERS, and the outcomes bound up front", () => {
    const rows = table(raw("docs/metrics.md"), "| `outcome` | status | on |");
    const documented = Object.fromEntries(
      rows.map(([outcome, status, on]) => [ticked(outcome as string)[0], { status: num(status as string), operations: on === "every operation" ? "every" : ticked(on as string) }]),
    );
    expect(documented).toEqual(ORDINARY_ANSWERS);
    const [upFront] = quoted(prose("docs/metrics.md"), /its `operations_total` outcomes ((?:`[a-z_]+`, )+`[a-z_]+` and `[a-z_]+`) and its/);
    expect(list(upFront as string)).toEqual(OUTCOMES_BOUND_UP_FRONT);
  });

  it("metrics.md: the cardinality figures", () => {
    const [operations, outcomes, classes, reasons, exhausted] = quoted(
      prose("docs/metrics.md"),
      /at most (\d+) operations × \((\d+) outcomes \+ (\d+) classes \+ (\d+) reasons \+ (\d+) exhausted classes \+ 1 rejection\)/,
    ).map(num);
    expect({ operations, outcomes, classes, reasons, exhausted }).toEqual({
      operations: STORAGE_OPERATIONS.length,
      outcomes: OPERATION_OUTCOMES.length,
      classes: OUTCOME_CLASSES.length + 1,
      reasons: RETRIABLE_CLASSES.length + 1,
      exhausted: RETRIABLE_CLASSES.length,
    });
    const [buckets] = quoted(prose("docs/metrics.md"), /(\d+) \+ 3 samples per histogram series/);
    expect(num(buckets as string)).toBe(DEFAULT_SECONDS_BUCKETS.length);
  });

  it("data-safety.md and metrics.md: the ambiguous write results and operations", () => {
    const [results, operations] = quoted(prose("docs/data-safety.md"), /counts writes that ended after an unknown attempt, by `result`: (.*?), with `operation` one of ((?:`[a-z_]+`, )+`[a-z_]+`)\./);
    expect(ticked(results as string).filter((word) => /^[a-z_]+$/.test(word))).toEqual(AMBIGUOUS_WRITE_RESULTS);
    expect(ticked(operations as string).sort()).toEqual([...AMBIGUOUS_WRITE_OPERATIONS].sort());
    const labels = table(raw("docs/metrics.md"), "| Label | Values |");
    const [writes] = quoted(row(labels, "`operation`")[1] as string, /the Tables write: (.*)$/);
    expect(ticked(writes as string).sort()).toEqual([...AMBIGUOUS_WRITE_OPERATIONS].sort());
  });

  it("tracing.md: the wait reasons; metrics.md: the OpenTelemetry meter's default name", () => {
    const [reasons] = quoted(raw("docs/tracing.md"), /`azure\.storage\.wait\.reason` \(((?:`[a-z]+`, )+`[a-z]+`)\)/);
    expect(ticked(reasons as string).sort()).toEqual([...LOCAL_WAIT_REASONS].sort());
    const [meter] = quoted(raw("docs/metrics.md"), /\| `meter` \| `metrics\.getMeter\("([^"]+)"\)` of `@opentelemetry\/api` \|/);
    const [global] = quoted(raw("docs/metrics.md"), /\/\/ or the global MeterProvider's meter "([^"]+)":/);
    expect([meter, global]).toEqual([OPEN_TELEMETRY_METER_NAME, OPEN_TELEMETRY_METER_NAME]);
  });

  it("testing.md: a row for every fault kind, and none that does not exist", () => {
    const rows = table(raw("docs/testing.md"), "| `kind` | what the client sees |");
    expect(rows.map(([kind]) => ticked(kind as string)[0]).sort()).toEqual([...FAULT_KINDS].sort());
  });

  it("troubleshooting.md: a row for every stop reason, and none that does not exist", () => {
    const rows = table(raw("docs/troubleshooting.md"), "| `stopReason` | meaning | what to do |");
    expect(rows.map(([reason]) => ticked(reason as string)[0]).sort()).toEqual([...STOP_REASONS].sort());
  });
});

describe("the demo: its defaults and its output format, as README quotes them", () => {
  it("states the demo's defaults: duration, partitions, seed, the drain, the outage, the target, the deadline", () => {
    const text = prose("README.md");
    const [duration] = quoted(text, /drives (\d+) s of open-loop traffic/);
    expect(num(duration as string)).toBe(DEFAULT_DEMO_OPTIONS.durationInSeconds);
    quoted(text, /\$batch`\) over four partitions through a real `TableClient`/);
    expect(DEFAULT_DEMO_OPTIONS.partitions).toBe(4);
    const [seed] = quoted(text, /\(seed (\d+), the default; abridged/);
    expect(num(seed as string)).toBe(DEFAULT_DEMO_OPTIONS.seed);
    const [traffic, drain] = quoted(text, /The (\d+) s of traffic are followed by up to (\d+) s for the operations still waiting/);
    expect([num(traffic as string), num(drain as string) * 1000]).toEqual([DEFAULT_DEMO_OPTIONS.durationInSeconds, DRAIN_TIMEOUT_IN_MS]);
    const [target] = quoted(text, /the ([\d,]+) entities\/s per partition scaled down/);
    expect(num(target as string)).toBe(AZURE_PARTITION_TARGET_PER_SECOND);
    const [offline] = quoted(text, /then goes offline for (\d+) s as if Azure moved it/);
    const plan = planFaults({ durationInMs: DEFAULT_DEMO_OPTIONS.durationInSeconds * 1000, partitions: ["p0", "p1", "p2", "p3"], throttleTargetPerSecond: 1 });
    const moved = plan.find((fault) => fault.name === "offline");
    expect(num(offline as string) * 1000).toBe((moved?.endInMs ?? 0) - (moved?.startInMs ?? 0));
    const [deadline] = quoted(text, /waits for callers like these, up to the (\d+) s deadline\)/);
    expect(num(deadline as string) * 1000).toBe(TABLE.maxElapsedInMs);
  });

  it("the sample output is what formatDemoSummary prints for the sample's own figures, line for line and in order", () => {
    const readme = raw("README.md");
    const [block] = quoted(readme, /What `npm start` printed[\s\S]*?```text\n([\s\S]*?)```/);
    const sample = (block as string).split("\n").filter((line) => line.trim() !== "");
    const printed = formatDemoSummary(summaryFrom(sample)).split("\n").filter((line) => line.trim() !== "");
    const squeeze = (line: string) => line.trim().replace(/\s+/g, " ");
    // The sample is abridged (two of four partitions, the SDK default's table left out): its lines come in the printed order.
    let at = 0;
    for (const line of sample.map(squeeze)) {
      const found = printed.map(squeeze).indexOf(line, at);
      expect(found, `README's sample line "${line}" is not printed, or not in this order`).toBeGreaterThanOrEqual(0);
      at = found + 1;
    }
    expect(sample[0]).toBe(RESILIENT_LABEL);
    expect(printed).toContain(BASELINE_LABEL);
  });
});

/** A demo summary with the sample's figures: its table rows, failure causes, side-by-side and verification lines. */
function summaryFrom(sample: string[]): DemoSummary {
  const cells = (line: string) => line.trim().split(/\s{2,}/);
  const header = sample.findIndex((line) => line.trim().startsWith("partition "));
  const rows: PartitionRow[] = [];
  let hot = "p0";
  for (const line of sample.slice(header + 1)) {
    const [name, ...figures] = cells(line);
    if (!/^(p\d+|total)/.test(name as string) || figures.length !== 12) break;
    const partition = (name as string).replace(" (hot)", "");
    if ((name as string).endsWith("(hot)")) hot = partition;
    const [ops, ok, failed, requests, retries, readBacks, throttles, timeouts, resets, opens, p50, p99] = figures as string[];
    const [failures, aborted] = (failed as string).replace(" cut", "").split("+").map(num);
    rows.push({
      partition, operations: num(ops as string), successes: num(ok as string), failures: failures as number, aborted: aborted ?? 0, requests: num(requests as string),
      retries: num(retries as string), readBacks: num(readBacks as string), throttles: num(throttles as string), timeouts: num(timeouts as string), resets: num(resets as string),
      breakerOpens: opens === "-" ? null : num(opens as string), p50InMs: num(p50 as string), p99InMs: num(p99 as string),
    });
  }
  const total = rows.pop() as PartitionRow;
  const causes = sample.find((line) => line.trim().startsWith("failures: "))?.trim().slice("failures: ".length).split(", ") ?? [];
  const failureCauses = causes.map((cause) => ({ count: num(cause.split(" x ")[0] as string), cause: cause.split(" x ").slice(1).join(" x ") }));
  const sideBySide = (label: string) => num(cells(sample.find((line) => line.trim().startsWith(label)) as string)[2] as string);
  const verification = (who: string) => {
    const line = sample.find((l) => l.trim().startsWith(who)) as string;
    const [acknowledged, found, lost, failedButStored, marked] = [...line.matchAll(/\d+/g)].map((m) => Number(m[0]));
    return { acknowledged: acknowledged as number, found: found as number, lost: lost as number, failedButStored: failedButStored as number, failedButStoredUnmarked: (failedButStored as number) - (marked as number), failedNotStored: 0, lostExamples: [] };
  };
  const run = (label: string, table: RunSummary["table"], failures: RunSummary["failureCauses"], checked: RunSummary["verification"]): RunSummary => ({
    label, planned: total.operations, fired: total.operations, table, failureCauses: failures, verification: checked,
  });
  const baselineTotal: PartitionRow = {
    partition: "total", operations: total.operations, successes: sideBySide("operations that succeeded"), failures: sideBySide("operations reported failed"), aborted: 0,
    requests: sideBySide("requests sent to the service"), retries: sideBySide("of which retries"), readBacks: sideBySide("of which read-backs"), throttles: 0, timeouts: 0, resets: 0,
    breakerOpens: null, p50InMs: sideBySide("p50 latency ms"), p99InMs: sideBySide("p99 latency ms"),
  };
  const d = DEFAULT_DEMO_OPTIONS;
  return {
    command: "demo",
    options: { durationInSeconds: d.durationInSeconds, ratePerSecond: d.ratePerSecond, partitions: d.partitions, seed: d.seed, baseline: true },
    interrupted: false,
    ranForSeconds: d.durationInSeconds,
    throttleTarget: { entitiesPerSecondPerPartition: 32, azureEntitiesPerSecondPerPartition: AZURE_PARTITION_TARGET_PER_SECOND, scaledDownBy: 63 },
    hotPartition: hot,
    surge: { startInSeconds: 2, endInSeconds: 7, multiplier: 2 },
    faults: [],
    metrics: { url: "http://127.0.0.1:1/metrics", scrape: null },
    resilient: run(sample[0] as string, { partitions: rows, total }, failureCauses, verification("resilient:")),
    baseline: run(BASELINE_LABEL, { partitions: [], total: baselineTotal }, [], { ...verification("SDK default:"), lost: sideBySide("acknowledged entities lost") }),
  };
}
