import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { ContainerClient } from "@azure/storage-blob";
import { Registry } from "prom-client";
import { createMetricsObserver, createPartitionBreaker, createRetryBudget, createRetryLogObserver, startMetricsServer, exponentialBackoff, fixedBackoff, installResilience, resilientRetryPolicy } from "../../../src/index.js";
import { createRetryStrategy } from "../../../src/backoff/createRetryStrategy.js";
import { SEND_NOW } from "../../../src/breaker/attemptGate.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";

// Every option, fuzzed: a valid value of each given key is accepted; any combination with
// at least one invalid value is rejected with a TypeError or RangeError naming one of them.

const DAY = 24 * 3600_000;

/** One option: arbitraries of valid and invalid values, and the names an error about it may use. */
interface OptionSpec {
  valid: fc.Arbitrary<unknown>;
  invalid: fc.Arbitrary<unknown>;
  names?: string[];
}
type Spec = Record<string, OptionSpec>;

const junk = fc.constantFrom<unknown>(null, "1", "", true, {}, [], () => 1, Symbol.for("x"), 10n);
const nonFinite = fc.constantFrom(Number.NaN, Infinity, -Infinity);

function number(min: number, max: number, opts: { integer?: boolean; allowInfinity?: boolean } = {}): OptionSpec {
  const valid = opts.integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  const outOfRange = fc.oneof(
    opts.integer
      ? fc.integer({ min: -1_000_000, max: min - 1 })
      : fc.double({ max: min, maxExcluded: true, noNaN: true, noDefaultInfinity: true }).filter((v) => v < min),
    opts.integer
      ? fc.integer({ min: max + 1, max: max + 1_000_000 })
      : fc.double({ min: max, minExcluded: true, noNaN: true, noDefaultInfinity: true }).filter((v) => v > max),
  );
  const invalids = [junk, outOfRange, opts.allowInfinity ? fc.constantFrom(Number.NaN, -Infinity) : nonFinite];
  if (opts.integer) invalids.push(fc.double({ min: min + 0.1, max: max - 0.1, noNaN: true }).filter((v) => !Number.isInteger(v)));
  return { valid: opts.allowInfinity ? fc.oneof(valid, fc.constant(Infinity)) : valid, invalid: fc.oneof(...invalids) };
}

/** A millisecond option: whole milliseconds only (a fraction is a value in seconds), `orZero` where 0 means none. */
function ms(min: number, max: number, opts: { allowInfinity?: boolean; orZero?: boolean } = {}): OptionSpec {
  const spec = number(min, max, { allowInfinity: opts.allowInfinity, integer: true });
  return opts.orZero ? { valid: fc.oneof(fc.constant(0), spec.valid), invalid: spec.invalid.filter((v) => v !== 0) } : spec;
}

/**
 * Options objects built from `spec`: `valid` uses valid values only; `invalid` has at least
 * one invalid value (or an unknown key) and returns the names an error may use.
 */
function optionsFrom(spec: Spec, requiredKeys: string[] = []) {
  const keys = Object.keys(spec);
  const valid = fc.record(Object.fromEntries(keys.map((k) => [k, spec[k]!.valid])), { requiredKeys }) as fc.Arbitrary<Record<string, unknown>>;
  const invalid = fc
    .tuple(valid, fc.subarray(keys, { minLength: 1 }), fc.boolean())
    .chain(([base, bad, withUnknown]) =>
      fc.tuple(fc.constant(base), fc.tuple(...bad.map((k) => spec[k]!.invalid)), fc.constant(bad), fc.constant(withUnknown)),
    )
    .map(([base, values, bad, withUnknown]) => {
      const options: Record<string, unknown> = { ...base };
      bad.forEach((k, i) => (options[k] = values[i]));
      const names = bad.flatMap((k) => [k, ...(spec[k]!.names ?? [])]);
      if (withUnknown) {
        options.notAnOption = 1;
        names.push("notAnOption");
      }
      return { options, names };
    });
  return { valid, invalid };
}

function expectRejected(create: () => unknown, names: string[]): void {
  let error: unknown;
  try {
    create();
  } catch (e) {
    error = e;
  }
  expect(error, `accepted an invalid combination; expected an error naming one of ${names.join(", ")}`).toBeInstanceOf(Error);
  expect(["TypeError", "RangeError"]).toContain((error as Error).name);
  const message = (error as Error).message;
  expect(names.some((name) => message.includes(name)), `"${message}" names none of ${names.join(", ")}`).toBe(true);
}

const runs = { numRuns: 300 };

const fixedSpec: Spec = { maxRetries: number(0, 1000, { integer: true }), delayInMs: ms(0, DAY) };
const exponentialSpec: Spec = {
  maxRetries: number(0, 1000, { integer: true }),
  baseDelayInMs: ms(0, DAY),
  // Valid ranges that keep minDelayInMs <= maxDelayInMs; invalid values are outside [0, a day].
  minDelayInMs: { valid: ms(0, 5000).valid, invalid: ms(0, DAY).invalid },
  maxDelayInMs: { valid: ms(5000, DAY).valid, invalid: ms(0, DAY).invalid },
  jitter: number(0, 0.999_999),
  random: { valid: fc.constant(() => 0.5), invalid: fc.constantFrom<unknown>(0.5, "random", {}, null) },
};

const strategyConfig = fc.oneof(
  fc.constant({ strategy: "none" }),
  optionsFrom(fixedSpec).valid.map((o) => ({ strategy: "fixed", ...o })),
  optionsFrom(exponentialSpec).valid.map((o) => ({ strategy: "exponential", ...o })),
  fc.constant(fixedBackoff()),
);
const badStrategy = fc.oneof(
  fc.constantFrom<unknown>(5, "fixed", null, { strategy: "sometimes" }, { strategy: "none", maxRetries: 1 }, { kind: "fixed" }),
  fc.constant({ strategy: "fixed", delayInMs: -1 }),
  fc.constant({ strategy: "exponential", jitter: 1 }),
  fc.constant({ kind: "custom", maxRetries: Number.NaN, maxDelayInMs: 10, delayInMs: () => 1 }),
  fc.constant({ kind: "custom", maxRetries: 3, maxDelayInMs: -5, delayInMs: () => 1 }),
);
const strategyNames = ["retry", "strategy", "maxRetries", "delayInMs", "jitter", "maxDelayInMs"];

const policySpec: Spec = {
  retry: { valid: strategyConfig, invalid: badStrategy, names: strategyNames },
  maxElapsedInMs: ms(10, DAY, { allowInfinity: true }),
  tryTimeoutInMs: ms(10, DAY, { orZero: true }),
  maxRetryAfterInMs: ms(0, DAY),
  classification: {
    valid: fc.constantFrom({}, { retriableStatusCodes: [409] }, { nonRetriableErrorCodes: ["OperationTimedOut"] }, { classify: () => undefined }),
    invalid: fc.constantFrom<unknown>(null, "x", { retriableStatusCodes: [999] }, { retriableErrorCodes: "ServerBusy" }, { classify: 5 }, { foo: 1 }),
  },
  observers: { valid: fc.constantFrom([], [{}], [{ onAttempt() {} }]), invalid: fc.constantFrom<unknown>(null, {}, "x", [null], [5]) },
  gate: { valid: fc.constant({ admit: () => SEND_NOW, record: () => undefined }), invalid: fc.constantFrom<unknown>(null, {}, 5) },
  caller: {
    valid: fc.oneof(fc.constantFrom({}, { failFast: true }, { failFast: false }), fc.integer({ min: 1, max: 1_000_000 }).map((n) => ({ concurrency: n }))),
    invalid: fc.constantFrom<unknown>(null, 5, "pool", [], { concurrency: 0 }, { concurrency: 1.5 }, { concurrency: null }, { concurrency: "4" }, { failFast: "yes" }, { failFast: null }, { concurrency: 4, failFast: true }, { workers: 4 }),
    names: ["caller", "concurrency", "failFast"],
  },
  ambiguousWrites: {
    valid: fc.oneof(fc.boolean(), fc.constant({}), ms(10, DAY).valid.map((v) => ({ readBackTimeoutInMs: v }))),
    invalid: fc.oneof(
      fc.constantFrom<unknown>(null, "yes", 1, [], { foo: 1 }, { readBackRoutes: null }, { readBackRoutes: {} }, { readBackRoutes: { remember() {} } }),
      ms(10, DAY).invalid.filter((v) => v !== undefined).map((v) => ({ readBackTimeoutInMs: v })),
    ),
  },
  retryBudget: {
    valid: fc.oneof(
      fc.constant(false),
      fc.constant(createRetryBudget()),
      optionsFrom({ retryRatio: number(0, 10), minRetriesPerSecond: number(0, 1_000_000), windowInMs: ms(100, 3_600_000) }).valid,
    ),
    invalid: fc.oneof(
      fc.constantFrom<unknown>(true, null, "x", 5, []),
      optionsFrom({ retryRatio: number(0, 10), minRetriesPerSecond: number(0, 1_000_000), windowInMs: ms(100, 3_600_000) }).invalid.map((x) => x.options),
    ),
  },
};

describe("options fuzz: strategies", () => {
  it.each([
    ["fixedBackoff", fixedSpec, (o: unknown) => fixedBackoff(o as never)],
    ["exponentialBackoff", exponentialSpec, (o: unknown) => exponentialBackoff(o as never)],
    ["createRetryStrategy fixed", fixedSpec, (o: unknown) => createRetryStrategy({ strategy: "fixed", ...(o as object) } as never)],
    ["createRetryStrategy exponential", exponentialSpec, (o: unknown) => createRetryStrategy({ strategy: "exponential", ...(o as object) } as never)],
  ])("%s: valid accepted, invalid rejected naming the option", (_name, spec, create) => {
    const { valid, invalid } = optionsFrom(spec);
    fc.assert(fc.property(valid, (options) => void create(options)), runs);
    fc.assert(fc.property(invalid, ({ options, names }) => expectRejected(() => create(options), names)), runs);
  });

  it("exponentialBackoff: minDelayInMs above maxDelayInMs is rejected naming both", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: DAY }), fc.integer({ min: 0, max: DAY }), (min, max) => {
        fc.pre(min > max);
        expectRejected(() => exponentialBackoff({ minDelayInMs: min, maxDelayInMs: max }), ["minDelayInMs"]);
      }),
    );
  });

  it("non-object options are rejected naming them", () => {
    for (const bad of [null, 5, "x", []]) {
      expectRejected(() => fixedBackoff(bad as never), ["fixedBackoff options"]);
      expectRejected(() => exponentialBackoff(bad as never), ["exponentialBackoff options"]);
      expectRejected(() => createRetryStrategy(bad as never), ["retry"]);
    }
  });
});

describe("options fuzz: resilientRetryPolicy", () => {
  it("valid options are accepted", () => {
    fc.assert(fc.property(optionsFrom(policySpec).valid, (options) => void resilientRetryPolicy(options as never)), runs);
  });

  it("any combination with an invalid option is rejected naming one", () => {
    fc.assert(fc.property(optionsFrom(policySpec).invalid, ({ options, names }) => expectRejected(() => resilientRetryPolicy(options as never), names)), {
      numRuns: 1000,
    });
  });

  it("non-object options are rejected", () => {
    for (const bad of [null, 5, "x", []]) expectRejected(() => resilientRetryPolicy(bad as never), ["options"]);
  });
});

describe("options fuzz: installResilience", () => {
  const client = new TableClient(
    `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}`,
    "fuzz",
    new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY),
    { allowInsecureConnection: true },
  );
  const registry = new Registry();
  const installSpec: Spec = {
    ...policySpec,
    retry: {
      valid: fc.oneof(strategyConfig, optionsFrom(exponentialSpec).valid.map((o) => ({ strategy: "exponential", ...o }))),
      invalid: badStrategy,
      names: strategyNames,
    },
    service: { valid: fc.constant("table"), invalid: fc.constantFrom<unknown>("tables", 5, null, "") },
    circuitBreaker: {
      valid: fc.constantFrom(false, {}, { idleTtlInMs: 1000 }, { resetTimeoutInMs: 2000 }, { consecutiveFailures: 3 }, { pacing: false }, { pacing: true }),
      invalid: fc.constantFrom<unknown>(
        5,
        "on",
        true,
        null,
        10n,
        { mode: "sometimes" },
        { mode: null },
        { mode: 10n },
        { resetTimeoutInMs: -1 },
        { consecutiveFailures: 0 },
        { pacing: null },
        // Pacing's options and rollingWindowInMs were removed: refused, named.
        { pacing: { decreaseFactor: 0.5 } },
        { rollingWindowInMs: 3000 },
      ),
      names: ["mode", "resetTimeoutInMs", "consecutiveFailures", "pacing", "rollingWindowInMs", "circuitBreaker"],
    },
    metrics: {
      valid: fc.constantFrom(false, { registry }, { registry, prefix: "fuzz_" }),
      invalid: fc.constantFrom<unknown>(
        5,
        "on",
        null,
        10n,
        { registry, prefix: "bad prefix" },
        { registry, prefix: null },
        { registry, prefix: 10n },
        { registry: {} },
        { registry: null },
        { registry, partitionLabel: { topN: null } },
        { registry, partitionLabel: { minThrottles: null } },
      ),
    },
  };
  delete installSpec.gate;

  it("valid options are accepted (and each install disposed)", () => {
    fc.assert(
      fc.property(optionsFrom(installSpec).valid, (options) => {
        installResilience(client, options as never).dispose();
      }),
      runs,
    );
  });

  it("any combination with an invalid option is rejected naming one", () => {
    fc.assert(
      fc.property(optionsFrom(installSpec).invalid, ({ options, names }) => expectRejected(() => installResilience(client, options as never).dispose(), names)),
      { numRuns: 1000 },
    );
  });

  it("ambiguousWrites is refused for services without entity writes", () => {
    const blob = new ContainerClient(`http://127.0.0.1:10000/${DEVSTORE_ACCOUNT_NAME}/fuzz`);
    expectRejected(() => installResilience(blob, { service: "blob", ambiguousWrites: true, metrics: false }), ["ambiguousWrites"]);
    installResilience(blob, { service: "blob", ambiguousWrites: false, metrics: false }).dispose();
  });
});

// The option objects beyond the policy and the install: each key with null, a BigInt and
// other junk is named, never taken as its default (issue 17, item 8).

const breakerSpec: Spec = {
  service: { valid: fc.constantFrom("table", "blob", "queue"), invalid: fc.oneof(junk, fc.constantFrom<unknown>("tables", "file")) },
  getScope: { valid: fc.constant(() => "scope"), invalid: fc.constantFrom<unknown>(null, 10n, "scope", {}, 5) },
  resetTimeoutInMs: ms(1, DAY),
  consecutiveFailures: number(1, 1_000_000, { integer: true, allowInfinity: true }),
  pacing: { valid: fc.boolean(), invalid: fc.oneof(junk.filter((v) => typeof v !== "boolean"), fc.constantFrom<unknown>(0, 1, "false", { decreaseFactor: 0.7 }, { minRatePerSecond: 1 })) },
  maxScopes: number(2, 10_000_000, { integer: true }),
  idleTtlInMs: ms(1, DAY, { allowInfinity: true }),
};

const budgetSpec: Spec = {
  retryRatio: number(0, 10),
  minRetriesPerSecond: number(0, 1_000_000),
  windowInMs: ms(100, 3_600_000),
  now: { valid: fc.constant(() => 0), invalid: fc.constantFrom<unknown>(null, 10n, 5, "now", {}) },
};

const metricsSpec: Spec = {
  // Always given (a fresh registry per run): the default registry would collect every run's families.
  registry: {
    valid: fc.constant(undefined).map(() => new Registry()),
    invalid: fc.constantFrom<unknown>(null, 10n, {}, "register", 5, { getSingleMetric: () => undefined }),
  },
  prefix: { valid: fc.constantFrom("", "fuzz_", "app:storage_"), invalid: fc.constantFrom<unknown>(null, 10n, true, 5, {}, [], () => "x", Symbol.for("x"), "bad prefix", "9x", "a-b") },
  partitionLabel: {
    valid: fc.oneof(
      fc.boolean(),
      optionsFrom({ topN: number(1, 1000, { integer: true }), minThrottles: number(1, 1_000_000, { integer: true }) }).valid,
    ),
    invalid: fc.oneof(
      fc.constantFrom<unknown>(null, 10n, 5, "on", [], { top: 3 }),
      optionsFrom({ topN: number(1, 1000, { integer: true }), minThrottles: number(1, 1_000_000, { integer: true }) }).invalid.map((x) => x.options),
    ),
    names: ["topN", "minThrottles", "notAnOption", "top"],
  },
  bucketsInSeconds: {
    valid: fc.constantFrom([0.1, 1, 10], [60]),
    invalid: fc.constantFrom<unknown>(null, 10n, [], [1, 0.5], [-1], [null], [10n], "0.1,1"),
  },
};

describe("options fuzz: the other option objects", () => {
  it.each([
    ["createPartitionBreaker", breakerSpec, [] as string[], (o: unknown) => createPartitionBreaker(o as never).dispose()],
    ["createRetryBudget", budgetSpec, [], (o: unknown) => createRetryBudget(o as never)],
    ["createMetricsObserver", metricsSpec, ["registry"], (o: unknown) => createMetricsObserver("table", o as never)],
  ])("%s: valid accepted, invalid (null and BigInt included) rejected naming the option", (_name, spec, required, create) => {
    const { valid, invalid } = optionsFrom(spec, required);
    fc.assert(fc.property(valid, (options) => void create(options)), runs);
    fc.assert(fc.property(invalid, ({ options, names }) => expectRejected(() => create(options), names)), { numRuns: 500 });
  });

  it.each([null, 10n, "tables", 5])("services named %o are rejected by every factory that takes one", (service) => {
    expectRejected(() => createMetricsObserver(service as never, { registry: new Registry() }), ["service"]);
    expectRejected(() => createRetryLogObserver({ service: service as never }), ["service"]);
    expectRejected(() => createPartitionBreaker({ service: service as never }), ["service"]);
  });

  it("createRetryLogObserver: unknown keys and non-objects are named", () => {
    expectRejected(() => createRetryLogObserver({ servce: "table" } as never), ["servce"]);
    for (const bad of [null, 10n, "table"]) expectRejected(() => createRetryLogObserver(bad as never), ["createRetryLogObserver options"]);
  });

  it("startMetricsServer: null, BigInt and junk in any option are rejected naming it, before anything listens", async () => {
    const badValues: Record<string, unknown[]> = {
      port: [null, 10n, -1, 65_536, 1.5, "9464", Number.NaN],
      host: [null, 10n, "", 5, {}],
      path: [null, 10n, "metrics", 5, {}],
      registry: [null, 10n, {}, "register"],
    };
    for (const [key, values] of Object.entries(badValues)) {
      for (const value of values) {
        const error = await startMetricsServer({ [key]: value } as never).then(
          (server) => server.close().then(() => undefined),
          (e: unknown) => e,
        );
        expect(error, `${key}: ${String(value)} was accepted`).toBeInstanceOf(Error);
        expect(["TypeError", "RangeError"]).toContain((error as Error).name);
        expect((error as Error).message).toContain(key);
      }
    }
  });
});
