import { describe, expect, it } from "vitest";
import { exponentialBackoff, fixedBackoff } from "../../../src/index.js";
import { noRetry } from "../../../src/backoff/createRetryStrategy.js";
import { resolveBackoffByClass } from "../../../src/backoff/backoffByClass.js";
import { OperationBackoff } from "../../../src/backoff/operationBackoff.js";
import type { RetryStrategy } from "../../../src/backoff/retryStrategy.js";

const retry = fixedBackoff({ maxRetries: 6, delayInMs: 1000 });

describe("resolveBackoffByClass", () => {
  it("without the option, every class uses retry", () => {
    const plan = resolveBackoffByClass(retry, undefined);
    expect(plan).toMatchObject({ maxRetries: 6, throttled: retry, transient: retry, timeout: retry });
    expect(plan.countedWith).toEqual({ throttled: "throttled", transient: "throttled", timeout: "throttled" });
  });

  it("a class left out uses retry; a config without maxRetries takes retry's", () => {
    const plan = resolveBackoffByClass(retry, { transient: { strategy: "fixed", delayInMs: 20 } });
    expect(plan.throttled).toBe(retry);
    expect(plan.timeout).toBe(retry);
    expect(plan.transient).toMatchObject({ kind: "fixed", maxRetries: 6, maxDelayInMs: 20 });
  });

  it("takes strategy objects as they are", () => {
    const timeout = exponentialBackoff({ maxRetries: 2 });
    expect(resolveBackoffByClass(retry, { timeout }).timeout).toBe(timeout);
  });

  it("{ strategy: 'none' } for a class means that class is never retried", () => {
    expect(resolveBackoffByClass(retry, { timeout: { strategy: "none" } }).timeout.maxRetries).toBe(0);
  });

  it.each([
    [null, TypeError, /backoff must be an object with throttled, transient or timeout strategies; got null/],
    [[], TypeError, /backoff must be an object/],
    ["fast", TypeError, /backoff must be an object/],
    [{ permanent: { strategy: "fixed" } }, TypeError, /backoff\.permanent is not a known option; known options are throttled, transient, timeout/],
    [{ transient: null }, TypeError, /backoff\.transient must be a retry strategy or \{ strategy: .*; got null/],
    [{ transient: { strategy: "linear" } }, TypeError, /backoff\.transient\.strategy/],
    [{ transient: { strategy: "fixed", delayInMs: -5 } }, RangeError, /^backoff\.transient\.delayInMs must be between 0 and .*; got -5/],
    [{ timeout: { strategy: "exponential", maxRetries: 7 } }, RangeError, /backoff\.timeout\.maxRetries \(7\) must not exceed retry\.maxRetries \(6\)/],
    [{ throttled: { kind: "fixed", maxRetries: Number.NaN, maxDelayInMs: 1, delayInMs: () => 1 } }, TypeError, /backoff\.throttled\.maxRetries must be a number; got NaN/],
  ])("rejects %j, naming the class", (option, type, message) => {
    expect(() => resolveBackoffByClass(retry, option)).toThrow(type);
    expect(() => resolveBackoffByClass(retry, option)).toThrow(message);
  });
});

/** A strategy that records what it is asked and answers 10 x retry number + previous. */
function recording(maxRetries: number): RetryStrategy & { calls: Array<[number, number | undefined]> } {
  const calls: Array<[number, number | undefined]> = [];
  return {
    kind: "fixed",
    maxRetries,
    maxDelayInMs: 1000,
    calls,
    delayInMs(retryNumber, previous) {
      calls.push([retryNumber, previous]);
      return 10 * retryNumber + (previous ?? 0);
    },
  };
}

describe("OperationBackoff", () => {
  it("numbers each class's retries on their own and hands each strategy back its own previous wait", () => {
    const throttled = recording(6);
    const transient = recording(6);
    const memory = new OperationBackoff(resolveBackoffByClass(fixedBackoff({ maxRetries: 6 }), { throttled, transient, timeout: noRetry() }));
    const waits = [
      memory.next("throttled", 0).delayInMs,
      memory.next("transient", 1).delayInMs,
      memory.next("throttled", 2).delayInMs,
      memory.next("transient", 3).delayInMs,
    ];
    expect(waits).toEqual([10, 10, 30, 30]);
    expect(throttled.calls).toEqual([[1, 0], [2, 10]]);
    expect(transient.calls).toEqual([[1, 0], [2, 10]]);
  });

  it("classes sharing a strategy share its count and previous wait, as one strategy for all always did", () => {
    const shared = recording(6);
    const memory = new OperationBackoff(resolveBackoffByClass(shared, { timeout: recording(6) }));
    expect([memory.next("transient", 0).delayInMs, memory.next("throttled", 1).delayInMs, memory.next("timeout", 2).delayInMs]).toEqual([10, 30, 10]);
    // transient and throttled both use retry's strategy: its second retry, handed its first wait.
    expect(shared.calls).toEqual([[1, 0], [2, 10]]);
  });

  it("caps the operation at retry's maxRetries whatever the classes", () => {
    const memory = new OperationBackoff(
      resolveBackoffByClass(fixedBackoff({ maxRetries: 2 }), { throttled: recording(2), transient: recording(2), timeout: recording(2) }),
    );
    expect(memory.next("throttled", 0).maxRetries).toBe(2);
    expect(memory.next("transient", 1).maxRetries).toBe(2);
    // Two retries made: the timeout's strategy is not even asked.
    const last = memory.next("timeout", 2);
    expect(last.maxRetries).toBe(2);
    expect(last.delayInMs).toBe(0);
  });

  it("caps a class at its own maxRetries, folded into the operation's count", () => {
    const transient = recording(1);
    const memory = new OperationBackoff(resolveBackoffByClass(fixedBackoff({ maxRetries: 6 }), { throttled: recording(6), transient, timeout: recording(6) }));
    expect(memory.next("transient", 0).maxRetries).toBe(1);
    expect(memory.next("throttled", 1).maxRetries).toBe(6);
    // The second reset, two retries in: transient has none left, so the cap is the retries done.
    expect(memory.next("transient", 2).maxRetries).toBe(2);
    expect(transient.calls).toHaveLength(1);
  });

  it("makes a user strategy's answer safe to wait on", () => {
    const answering = (value: number): RetryStrategy => ({ kind: "fixed", maxRetries: 3, maxDelayInMs: 700, delayInMs: () => value });
    const plan = (s: RetryStrategy) => resolveBackoffByClass(s, undefined);
    expect(new OperationBackoff(plan(answering(Number.NaN))).next("throttled", 0).delayInMs).toBe(700);
    expect(new OperationBackoff(plan(answering(-5))).next("throttled", 0).delayInMs).toBe(0);
    expect(new OperationBackoff(plan(answering(1e12))).next("throttled", 0).delayInMs).toBe(86_400_000);
  });
});
