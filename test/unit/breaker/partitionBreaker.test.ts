import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import CircuitBreaker from "opossum";
import type { OutcomeClass } from "../../../src/classification/outcomeClass.js";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import type { CircuitTransition } from "../../../src/breaker/circuitStateSource.js";
import { DEFAULT_PARTITION_BREAKER_OPTIONS, type PartitionBreakerOptions } from "../../../src/breaker/partitionBreakerOptions.js";
import { CircuitOpenError, isCircuitOpenError } from "../../../src/errors/circuitOpenError.js";
import { logger } from "../../../src/logging/logger.js";
import type { AttemptResult } from "../../../src/policies/attemptGate.js";

const HOST = "https://acct.table.core.windows.net";
const key = (pk: string) => `table|acct|orders|${pk}`;

function entityRequest(pk: string): PipelineRequest {
  return createPipelineRequest({ url: `${HOST}/orders(PartitionKey='${pk}',RowKey='r')`, method: "GET" });
}

const STATUS: Record<OutcomeClass, number | undefined> = {
  success: 200,
  throttled: 503,
  transient: 500,
  timeout: 504,
  permanent: 404,
  aborted: undefined,
};

function result(outcomeClass: OutcomeClass, status = STATUS[outcomeClass]): AttemptResult {
  return { outcomeClass, status };
}

/** Runs one attempt for `pk` answering `outcome`; resolves to the result, or to the CircuitOpenError. */
async function runOnce(breaker: PartitionBreaker, pk: string, outcome: AttemptResult | OutcomeClass) {
  const answer = typeof outcome === "string" ? result(outcome) : outcome;
  const attempt = vi.fn(async () => answer);
  try {
    const got = await breaker.run(entityRequest(pk), attempt);
    return { got, attempted: attempt.mock.calls.length };
  } catch (error) {
    return { error, attempted: attempt.mock.calls.length };
  }
}

async function runMany(breaker: PartitionBreaker, pk: string, outcome: OutcomeClass, times: number) {
  for (let i = 0; i < times; i++) await runOnce(breaker, pk, outcome);
}

const breakers: PartitionBreaker[] = [];
function make(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const breaker = createPartitionBreaker(options);
  breakers.push(breaker);
  return breaker;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  for (const breaker of breakers.splice(0)) breaker.dispose();
  vi.useRealTimers();
});

describe("createPartitionBreaker: opening", () => {
  it.each<OutcomeClass>(["throttled", "timeout", "transient"])("opens on the 10th %s attempt (volumeThreshold 10), not before", async (cls) => {
    const breaker = make({ volumeThreshold: 10, consecutiveFailures: Infinity });
    await runMany(breaker, "p1", cls, 9);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    await runMany(breaker, "p1", cls, 1);
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(breaker.openScopes()).toEqual([key("p1")]);
  });

  it("by default opens on the 5th rebalancing failure in the window", async () => {
    expect(DEFAULT_PARTITION_BREAKER_OPTIONS.volumeThreshold).toBe(5);
    const breaker = make();
    await runMany(breaker, "p1", "throttled", 4);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    await runMany(breaker, "p1", "throttled", 1);
    expect(breaker.stateOf(key("p1"))).toBe("open");
  });

  it("returns the real AttemptResult of a rebalancing failure, unchanged", async () => {
    const breaker = make();
    const busy = { outcomeClass: "throttled" as const, status: 503, errorCode: "ServerBusy" };
    const { got } = await runOnce(breaker, "p1", busy);
    expect(got).toBe(busy);
  });

  it("once open, fails locally with CircuitOpenError without calling the attempt", async () => {
    const breaker = make({ resetTimeoutInMs: 4000 });
    await runMany(breaker, "p1", "throttled", 10);
    vi.advanceTimersByTime(1000);
    const { error, attempted } = await runOnce(breaker, "p1", "success");
    expect(attempted).toBe(0);
    expect(isCircuitOpenError(error)).toBe(true);
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect((error as CircuitOpenError).scope).toBe(key("p1"));
    expect((error as CircuitOpenError).retryAfterInMs).toBe(3000);
  });

  it.each<[string, number]>([
    ["404", 404],
    ["409", 409],
    ["412", 412],
    ["400", 400],
  ])("hundreds of %s outcomes leave it closed", async (_name, status) => {
    const breaker = make();
    await runOnce(breaker, "p1", "throttled"); // gives p1 a circuit
    for (let i = 0; i < 300; i++) await runOnce(breaker, "p1", result("permanent", status));
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(breaker.openScopes()).toEqual([]);
  });

  it("aborted attempts never count as failures", async () => {
    const breaker = make();
    await runOnce(breaker, "p1", "throttled");
    await runMany(breaker, "p1", "aborted", 100);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("an attempt that throws (a bug, not an outcome) is rethrown and never counts", async () => {
    const breaker = make();
    const bug = new Error("bug");
    await runOnce(breaker, "p1", "throttled");
    for (let i = 0; i < 20; i++) {
      await expect(breaker.run(entityRequest("p1"), async () => Promise.reject(bug))).rejects.toBe(bug);
    }
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("a failure rate at or under the threshold keeps it closed; above it opens", async () => {
    const breaker = make({ volumeThreshold: 10, consecutiveFailures: Infinity });
    for (let i = 0; i < 10; i++) await runOnce(breaker, "p1", i % 2 === 0 ? "throttled" : "success");
    expect(breaker.stateOf(key("p1"))).toBe("closed"); // 50 % is not above 50 %
    await runMany(breaker, "p1", "throttled", 1);
    expect(breaker.stateOf(key("p1"))).toBe("open"); // 6/11
  });

  it("failures age out of the rolling window", async () => {
    const breaker = make({ volumeThreshold: 10, consecutiveFailures: Infinity });
    await runMany(breaker, "p1", "throttled", 9);
    vi.advanceTimersByTime(3_000);
    await runMany(breaker, "p1", "throttled", 9);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("scopes are independent: p1 open does not touch p2", async () => {
    const breaker = make();
    await runMany(breaker, "p1", "throttled", 10);
    await runOnce(breaker, "p2", "throttled");
    const { got, attempted } = await runOnce(breaker, "p2", "success");
    expect(attempted).toBe(1);
    expect(got?.outcomeClass).toBe("success");
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(breaker.stateOf(key("p2"))).toBe("closed");
    expect(breaker.stateCounts()).toEqual({ closed: 1, open: 1, half_open: 0 });
  });
});

describe("createPartitionBreaker: circuits only where failures are", () => {
  it("a scope with only successes gets no circuit, and no timer runs", async () => {
    const breaker = make();
    await runMany(breaker, "p1", "success", 50);
    await runMany(breaker, "p2", "permanent", 50);
    expect(breaker.size).toBe(0);
    expect(breaker.stateOf(key("p1"))).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the first rebalancing failure gives the scope a closed circuit that counts it", async () => {
    const breaker = make();
    await runOnce(breaker, "p1", "throttled");
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(breaker.stateCounts()).toEqual({ closed: 1, open: 0, half_open: 0 });
    await runMany(breaker, "p1", "throttled", 4);
    expect(breaker.stateOf(key("p1"))).toBe("open"); // the first failure counted: 5 of 5
  });

  it("a new circuit counts from its first failure: successes before it do not dilute the window", async () => {
    const breaker = make({ consecutiveFailures: Infinity });
    await runMany(breaker, "p1", "success", 100);
    for (const outcome of ["throttled", "success", "timeout", "throttled", "success", "transient", "throttled"] as const) {
      await runOnce(breaker, "p1", outcome);
    }
    expect(breaker.stateOf(key("p1"))).toBe("open"); // 5 of 7 since the circuit came, not 5 of 107
  });

  it("opens after consecutiveFailures in a row; a success in between resets the run", async () => {
    const breaker = make({ errorThresholdPercentage: 99 });
    await runMany(breaker, "p1", "throttled", 4);
    await runOnce(breaker, "p1", "success");
    await runMany(breaker, "p1", "throttled", 4);
    expect(breaker.stateOf(key("p1"))).toBe("closed"); // 8 of 9, never 5 in a row
    await runOnce(breaker, "p1", "timeout");
    expect(breaker.stateOf(key("p1"))).toBe("open");
  });

  it("while no scope has a circuit, a successful attempt does not even read its scope", async () => {
    const getScope = vi.fn((request: PipelineRequest) => (request.url.includes("'p2'") ? key("p2") : key("p1")));
    const breaker = make({ getScope });
    await runMany(breaker, "p1", "success", 20);
    expect(getScope).not.toHaveBeenCalled();
    await runOnce(breaker, "p2", "throttled");
    expect(breaker.stateOf(key("p2"))).toBe("closed");
    // With a circuit somewhere, every attempt's scope is read, to find out whether it is that one.
    await runOnce(breaker, "p1", "success");
    expect(getScope).toHaveBeenCalledTimes(2);
  });

  it("a closed circuit goes once its window holds no failure, and the scope is cheap again", async () => {
    const breaker = make({ idleTtlInMs: 10_000, rollingWindowInMs: 3_000 });
    await runOnce(breaker, "p1", "throttled");
    for (let t = 0; t < 4; t++) {
      vi.advanceTimersByTime(2_000);
      await runOnce(breaker, "p1", "success"); // in use all along: not idle
    }
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("createPartitionBreaker: half-open", () => {
  async function opened(options: PartitionBreakerOptions = {}) {
    const breaker = make({ resetTimeoutInMs: 3000, ...options });
    const transitions: CircuitTransition[] = [];
    breaker.onTransition((t) => transitions.push(t));
    await runMany(breaker, "p1", "throttled", 10);
    return { breaker, transitions };
  }

  it("goes half-open after the reset period; retryAfterInMs counts down to it", async () => {
    const { breaker } = await opened();
    vi.advanceTimersByTime(2999);
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(((await runOnce(breaker, "p1", "success")).error as CircuitOpenError).retryAfterInMs).toBe(1);
    vi.advanceTimersByTime(1);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
    expect(breaker.halfOpenScopes()).toEqual([key("p1")]);
  });

  it("a successful probe closes it", async () => {
    const { breaker, transitions } = await opened();
    vi.advanceTimersByTime(3000);
    const { got, attempted } = await runOnce(breaker, "p1", "success");
    expect(attempted).toBe(1);
    expect(got?.outcomeClass).toBe("success");
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(["closed>open", "open>half_open", "half_open>closed"]);
    expect(transitions[0]).toEqual({ service: "table", scope: key("p1"), from: "closed", to: "open" });
  });

  it("a 404 probe closes it too: the partition answers", async () => {
    const { breaker } = await opened();
    vi.advanceTimersByTime(3000);
    await runOnce(breaker, "p1", "permanent");
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it.each<OutcomeClass>(["throttled", "timeout", "transient", "aborted"])("a %s probe reopens it for another full period", async (cls) => {
    const { breaker, transitions } = await opened();
    vi.advanceTimersByTime(3000);
    const { got } = await runOnce(breaker, "p1", cls);
    expect(got?.outcomeClass).toBe(cls);
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(transitions.at(-1)).toMatchObject({ from: "half_open", to: "open" });
    expect(((await runOnce(breaker, "p1", "success")).error as CircuitOpenError).retryAfterInMs).toBe(3000);
    vi.advanceTimersByTime(3000);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
  });

  it("lets exactly one probe through; the others get CircuitOpenError with a short retryAfterInMs", async () => {
    const { breaker } = await opened();
    vi.advanceTimersByTime(3000);
    let answer!: (r: AttemptResult) => void;
    const probeAttempt = vi.fn(() => new Promise<AttemptResult>((resolve) => (answer = resolve)));
    const probe = breaker.run(entityRequest("p1"), probeAttempt);
    const others = await Promise.all(Array.from({ length: 5 }, () => runOnce(breaker, "p1", "success")));
    expect(probeAttempt).toHaveBeenCalledTimes(1);
    for (const other of others) {
      expect(other.attempted).toBe(0);
      expect((other.error as CircuitOpenError).retryAfterInMs).toBe(300);
    }
    answer(result("success"));
    await expect(probe).resolves.toMatchObject({ outcomeClass: "success" });
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect((await runOnce(breaker, "p1", "success")).attempted).toBe(1);
  });
});

describe("createPartitionBreaker: scopes", () => {
  it("requests without a scope bypass the breaker", async () => {
    const breaker = make();
    const attempt = vi.fn(async () => result("throttled"));
    const request = createPipelineRequest({ url: "https://example.com/whatever", method: "GET" });
    for (let i = 0; i < 20; i++) await breaker.run(request, attempt);
    expect(attempt).toHaveBeenCalledTimes(20);
    expect(breaker.size).toBe(0);
  });

  it("scopes Azurite path-style URLs with the configured service", async () => {
    const breaker = make({ service: "table" });
    const request = createPipelineRequest({ url: "http://127.0.0.1:10002/devstoreaccount1/orders(PartitionKey='p',RowKey='r')", method: "GET" });
    await breaker.run(request, async () => result("throttled"));
    expect(breaker.stateOf("table|devstoreaccount1|orders|p")).toBe("closed");
  });

  it("scopes an insert by the PartitionKey in its body", async () => {
    const breaker = make();
    const request = createPipelineRequest({ url: `${HOST}/orders`, method: "POST", body: JSON.stringify({ PartitionKey: "b1", RowKey: "r" }) });
    await breaker.run(request, async () => result("throttled"));
    expect(breaker.stateOf(key("b1"))).toBe("closed");
  });

  it("a user getScope overrides; undefined or a throw bypasses", async () => {
    const getScope = (r: PipelineRequest): string | undefined => {
      if (r.url.includes("'boom'")) throw new Error("getScope bug");
      return r.url.includes("'mine'") ? "my-scope" : undefined;
    };
    const breaker = make({ getScope });
    for (const pk of ["mine", "other", "boom"]) await runOnce(breaker, pk, "throttled");
    expect(breaker.size).toBe(1);
    expect(breaker.stateOf("my-scope")).toBe("closed");
  });
});

describe("createPartitionBreaker: bounded registry", () => {
  it("keeps at most maxScopes circuits, evicting the least recently used, and shuts each evicted one down", async () => {
    const shutdown = vi.spyOn(CircuitBreaker.prototype, "shutdown");
    const breaker = make({ maxScopes: 3 });
    for (const pk of ["a", "b", "c"]) await runOnce(breaker, pk, "throttled");
    await runOnce(breaker, "a", "success"); // a is now the most recent
    await runOnce(breaker, "d", "throttled");
    expect(breaker.size).toBe(3);
    expect(breaker.stateOf(key("b"))).toBeUndefined();
    expect(breaker.stateOf(key("a"))).toBe("closed");
    expect(shutdown).toHaveBeenCalledTimes(1);
    for (const pk of ["e", "f", "g", "h"]) await runOnce(breaker, pk, "throttled");
    expect(breaker.size).toBe(3);
    expect(shutdown).toHaveBeenCalledTimes(5);
  });

  it("an evicted open circuit leaves the open list and the counts", async () => {
    const breaker = make({ maxScopes: 2 });
    await runMany(breaker, "a", "throttled", 10);
    expect(breaker.openScopes()).toEqual([key("a")]);
    await runOnce(breaker, "b", "throttled");
    await runOnce(breaker, "c", "throttled");
    expect(breaker.openScopes()).toEqual([]);
    expect(breaker.stateCounts()).toEqual({ closed: 2, open: 0, half_open: 0 });
  });

  it("evicts circuits idle for idleTtlInMs and shuts them down", async () => {
    const shutdown = vi.spyOn(CircuitBreaker.prototype, "shutdown");
    // Long reset period: "busy" stays open (so never retirable) and is touched every 4 s.
    const breaker = make({ idleTtlInMs: 10_000, resetTimeoutInMs: 60_000 });
    await runMany(breaker, "idle", "throttled", 10);
    await runMany(breaker, "busy", "throttled", 10);
    for (let t = 0; t < 4; t++) {
      vi.advanceTimersByTime(4_000);
      await runOnce(breaker, "busy", "success");
    }
    vi.advanceTimersByTime(5_000);
    expect(breaker.stateOf(key("idle"))).toBeUndefined();
    expect(breaker.stateOf(key("busy"))).toBe("open");
    expect(shutdown).toHaveBeenCalledTimes(1);
  });

  it("holds two timers for thousands of closed circuits, and none once empty or disposed", async () => {
    const breaker = make({ idleTtlInMs: 1_000 });
    expect(vi.getTimerCount()).toBe(0);
    for (let i = 0; i < 2_000; i++) await runOnce(breaker, `k${i}`, "throttled");
    expect(vi.getTimerCount()).toBe(2); // bucket rotation + idle sweep
    vi.advanceTimersByTime(2_000);
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await runOnce(breaker, "again", "throttled");
    expect(vi.getTimerCount()).toBe(2);
    breaker.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("dispose shuts every circuit down, stops every timer, and lets later attempts straight through", async () => {
    const shutdown = vi.spyOn(CircuitBreaker.prototype, "shutdown");
    const breaker = make();
    await runMany(breaker, "p1", "throttled", 10);
    await runOnce(breaker, "p2", "throttled");
    expect(vi.getTimerCount()).toBe(3); // rotation, sweep, p1's reset timer
    breaker.dispose();
    breaker.dispose();
    expect(shutdown).toHaveBeenCalledTimes(2);
    expect(breaker.size).toBe(0);
    expect(breaker.openScopes()).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
    expect((await runOnce(breaker, "p1", "success")).attempted).toBe(1);
  });
});

describe("createPartitionBreaker: modes, events, logging", () => {
  it("mode defaults to wait; fail turns waitWhenOpen off", () => {
    expect(make().waitWhenOpen).toBe(true);
    expect(make().mode).toBe("wait");
    expect(make({ mode: "fail" }).waitWhenOpen).toBe(false);
  });

  it("logs each transition at warning with the scope key", async () => {
    const warning = vi.spyOn(logger, "warning").mockImplementation(() => undefined);
    const breaker = make();
    await runMany(breaker, "p1", "throttled", 10);
    vi.advanceTimersByTime(3000);
    await runOnce(breaker, "p1", "success");
    const lines = warning.mock.calls.map((c) => String(c[0]));
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toContain(`"${key("p1")}"`);
    expect(lines[0]).toMatch(/opened/);
    expect(lines[1]).toMatch(/half-open/);
    expect(lines[2]).toMatch(/closed/);
  });

  it("a throwing transition listener is ignored; unsubscribe stops delivery", async () => {
    vi.spyOn(logger, "warning").mockImplementation(() => undefined);
    const breaker = make();
    const seen: string[] = [];
    breaker.onTransition(() => {
      throw new Error("listener bug");
    });
    const off = breaker.onTransition((t) => seen.push(t.to));
    await runMany(breaker, "p1", "throttled", 10);
    off();
    vi.advanceTimersByTime(3000);
    expect(seen).toEqual(["open"]);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
  });
});

describe("createPartitionBreaker: options", () => {
  it.each<[string, unknown, typeof TypeError | typeof RangeError, RegExp]>([
    ["mode", "sometimes", TypeError, /mode must be one of "wait", "fail"; got "sometimes"/],
    ["service", "files", TypeError, /service must be one of/],
    ["getScope", "key", TypeError, /getScope must be a function/],
    ["resetTimeoutInMs", 0, RangeError, /resetTimeoutInMs must be between 1 and .*; got 0/],
    ["resetTimeoutInMs", "3000", TypeError, /resetTimeoutInMs must be a number; got "3000"/],
    ["errorThresholdPercentage", 100, RangeError, /errorThresholdPercentage must be below 100/],
    ["errorThresholdPercentage", -1, RangeError, /errorThresholdPercentage must be between 0 and 100; got -1/],
    ["volumeThreshold", 2.5, RangeError, /volumeThreshold must be an integer; got 2.5/],
    ["consecutiveFailures", 0, RangeError, /consecutiveFailures must be between 1/],
    ["consecutiveFailures", "5", TypeError, /consecutiveFailures must be a number; got "5"/],
    ["rollingWindowInMs", 5, RangeError, /rollingWindowInMs must be between 10/],
    ["maxScopes", 0, RangeError, /maxScopes must be between 1/],
    ["maxScopes", Infinity, RangeError, /maxScopes must be a finite number/],
    ["idleTtlInMs", Number.NaN, TypeError, /idleTtlInMs must be a number; got NaN/],
  ])("rejects %s = %j", (name, value, type, message) => {
    const build = () => createPartitionBreaker({ [name]: value } as PartitionBreakerOptions);
    expect(build).toThrow(type);
    expect(build).toThrow(message);
  });

  it("rejects unknown keys and non-objects", () => {
    expect(() => createPartitionBreaker({ resetTimeout: 5 } as PartitionBreakerOptions)).toThrow(/circuitBreaker options.resetTimeout is not a known option/);
    expect(() => createPartitionBreaker(null as unknown as PartitionBreakerOptions)).toThrow(TypeError);
  });

  it("accepts idleTtlInMs Infinity: no sweep timer", async () => {
    const breaker = make({ idleTtlInMs: Infinity });
    await runOnce(breaker, "p", "throttled");
    expect(vi.getTimerCount()).toBe(1);
  });
});
