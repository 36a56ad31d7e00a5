import { describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { installResilience, resilientRetryPolicy } from "../../../src/index.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
import { thrown } from "../../support/thrown.js";

// The mistakes a newcomer makes with options (issue 37, item 6), each caught when the client is
// set up, by the one schema every options object goes through: a value in seconds where
// milliseconds are meant, a misspelt name, and a typo under `retry` written without a strategy.

const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
const tableClient = () => new TableClient("https://acct.table.core.windows.net", "orders", credential);
const install = (options: Record<string, unknown>) => installResilience(tableClient(), { metrics: false, ...options } as never).dispose();
const policy = (options: Record<string, unknown>) => resilientRetryPolicy(options as never);

describe("a millisecond option given in seconds", () => {
  it("tryTimeoutInMs: 0.5 (half a second) is refused, naming the option, the value and the mistake", () => {
    for (const make of [install, policy]) {
      const error = thrown(() => make({ tryTimeoutInMs: 0.5 }));
      expect(error).toBeInstanceOf(RangeError);
      expect(error.message).toBe("tryTimeoutInMs must be a whole number of milliseconds; got 0.5 (milliseconds, not seconds: for 0.5 s, write 500).");
    }
  });

  it.each([
    [{ tryTimeoutInMs: 5 }, "tryTimeoutInMs must be 0 or between 10 and 86400000; got 5 (milliseconds, not seconds: for 5 s, write 5000)."],
    [{ maxElapsedInMs: 2 }, "maxElapsedInMs must be between 10 and 86400000; got 2 (milliseconds, not seconds: for 2 s, write 2000)."],
    [{ maxElapsedInMs: 1.5 }, "maxElapsedInMs must be a whole number of milliseconds; got 1.5 (milliseconds, not seconds: for 1.5 s, write 1500)."],
    [{ ambiguousWrites: { readBackTimeoutInMs: 3 } }, "ambiguousWrites.readBackTimeoutInMs must be between 10 and 86400000; got 3 (milliseconds, not seconds: for 3 s, write 3000)."],
    [{ retryBudget: { windowInMs: 10 } }, "retryBudget.windowInMs must be between 100 and 3600000; got 10 (milliseconds, not seconds: for 10 s, write 10000)."],
  ])("%j is refused through installResilience and resilientRetryPolicy", (options, message) => {
    for (const make of [install, policy]) expect(() => make(options)).toThrow(new RangeError(message));
  });

  it("a value no reading in seconds would fit is refused without the hint", () => {
    // A thousandfold of 100,000 ms is past a day; -1 and 0 are no one's seconds.
    expect(() => policy({ maxElapsedInMs: 86_400_000.5 })).toThrow(new RangeError("maxElapsedInMs must be a whole number of milliseconds; got 86400000.5."));
    expect(() => policy({ tryTimeoutInMs: -1 })).toThrow(new RangeError("tryTimeoutInMs must be 0 or between 10 and 86400000; got -1."));
    expect(() => policy({ maxElapsedInMs: 0 })).toThrow(new RangeError("maxElapsedInMs must be between 10 and 86400000; got 0."));
  });

  it("the values that can be meant are taken: 0 (no timeout), the floor, Infinity (no deadline)", () => {
    for (const make of [install, policy]) {
      expect(() => make({ tryTimeoutInMs: 0, maxElapsedInMs: Infinity })).not.toThrow();
      expect(() => make({ tryTimeoutInMs: 10, maxElapsedInMs: 10, retry: { strategy: "fixed", delayInMs: 0 } })).not.toThrow();
    }
  });

  // Every option named `...InMs`, wherever it sits: one rule, read from the unit in the name.
  it.each([
    [{ retry: { baseDelayInMs: 0.8 } }, "retry.baseDelayInMs"],
    [{ retry: { strategy: "exponential", minDelayInMs: 0.1 } }, "retry.minDelayInMs"],
    [{ retry: { maxDelayInMs: 30.5 } }, "retry.maxDelayInMs"],
    [{ retry: { strategy: "fixed", delayInMs: 0.5 } }, "retry.delayInMs"],
    [{ retry: { strategy: "decorrelated", baseDelayInMs: 0.5 } }, "retry.baseDelayInMs"],
    [{ backoff: { throttled: { strategy: "exponential", baseDelayInMs: 1.5 } } }, "backoff.throttled.baseDelayInMs"],
    [{ maxRetryAfterInMs: 2.5 }, "maxRetryAfterInMs"],
    [{ circuitBreaker: { resetTimeoutInMs: 0.3 } }, "circuitBreaker.resetTimeoutInMs"],
    [{ circuitBreaker: { idleTtlInMs: 30.5 } }, "circuitBreaker.idleTtlInMs"],
    [{ retryBudget: { windowInMs: 0.5 } }, "retryBudget.windowInMs"],
  ])("installResilience(client, %j) names %s and the mistake", (options, path) => {
    const error = thrown(() => install(options));
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toMatch(new RegExp(`^${path.replaceAll(".", "\\.")} must be a whole number of milliseconds; got [0-9.]+ \\(milliseconds, not seconds: for `));
  });
});

describe("a misspelt option names the closest known one first", () => {
  it.each([
    [install, { maxElapsed: 60 }, "maxElapsed is not a known option of installResilience; did you mean maxElapsedInMs? Known options are service, retry, "],
    [policy, { maxElapsed: 60 }, "maxElapsed is not a known option of resilientRetryPolicy; did you mean maxElapsedInMs? Known options are retry, backoff, "],
    [policy, { tryTimoeutInMs: 500 }, "tryTimoeutInMs is not a known option of resilientRetryPolicy; did you mean tryTimeoutInMs? Known options are "],
    [install, { maxelapsedinms: 60_000 }, "maxelapsedinms is not a known option of installResilience; did you mean maxElapsedInMs? Known options are "],
    // Typos keep the first letter: `retries` is nearer to `metrics` by edits, but meant `retry`.
    [install, { retries: 3 }, "retries is not a known option of installResilience; did you mean retry? Known options are "],
    // The nearest, not the first of the near ones: `retry` comes first and is near too.
    [install, { retryBudgt: false }, "retryBudgt is not a known option of installResilience; did you mean retryBudget? Known options are "],
    [install, { circuitBreaker: { resetTimeout: 300 } }, "circuitBreaker.resetTimeout is not a known option; did you mean resetTimeoutInMs? Known options are "],
    [policy, { retryBudget: { ratio: 0.1 } }, "retryBudget.ratio is not a known option; did you mean retryRatio? Known options are "],
  ])("%o(%j)", (make, options, start) => {
    const error = thrown(() => make(options));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message.startsWith(start), error.message).toBe(true);
  });

  it("a name like none of them gets the list alone", () => {
    expect(() => install({ circuitBreaker: { threshold: 5 } })).toThrow(
      new TypeError(
        "circuitBreaker.threshold is not a known option; known options are service, getScope, resetTimeoutInMs, consecutiveFailures, pacing, maxScopes, idleTtlInMs.",
      ),
    );
  });
});

describe("a typo under retry names the path the caller wrote", () => {
  it("retry: { maxRetry } with no strategy names retry and the backoff it sets, not a strategy the caller did not write", () => {
    const error = thrown(() => install({ retry: { maxRetry: 3 } }));
    expect(error).toEqual(
      new TypeError(
        "retry.maxRetry is not a known option of retry (an exponential backoff); did you mean maxRetries? Known options are maxRetries, baseDelayInMs, minDelayInMs, maxDelayInMs, jitter, random.",
      ),
    );
    expect(error.message).not.toContain("strategy");
  });

  it("with a strategy written, the same, through either entry", () => {
    for (const make of [install, policy]) {
      expect(() => make({ retry: { strategy: "exponential", maxRetry: 3 } })).toThrow(/^retry\.maxRetry is not a known option of retry \(an exponential backoff\); did you mean maxRetries\?/);
      expect(() => make({ retry: { strategy: "fixed", baseDelayInMs: 100 } })).toThrow(/^retry\.baseDelayInMs is not a known option of retry \(a fixed backoff\); did you mean delayInMs\? Known options are maxRetries, delayInMs\.$/);
    }
  });
});
