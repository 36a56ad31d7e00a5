// Whether a retry spends the retry budget is read from the admission it is sent on (the gate
// contract: a retry sent on a paced admission is not counted), at send time; the budget's "no"
// then is obeyed (an open loop defers, a caller that may not wait stops), and an admission not
// sent on is given back to the gate.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { createRetryBudget, fixedBackoff, getRetryInfo, resilientRetryPolicy, type RetryBudget } from "../../../src/index.js";
import { SEND_NOW, type Send, type Wait } from "../../../src/breaker/attemptGate.js";
import { asGateOption, gateOf, scripted, waitOf } from "../../support/scriptedGate.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";
const request = () => createPipelineRequest({ url, method: "GET" });

/** A budget that is always empty, whose calls are counted. */
function emptyBudget(): RetryBudget & { tryRetry: ReturnType<typeof vi.fn> } {
  return { recordRequest: () => undefined, tryRetry: vi.fn(() => false), snapshot: () => ({ requests: 0, retries: 0, available: 0 }), retryAfterInMs: () => 500 };
}

/** A budget whose retryAfterInMs says a retry is free while tryRetry refuses the first (another operation took it in between). */
function racedBudget(): RetryBudget & { tryRetry: ReturnType<typeof vi.fn> } {
  const tryRetry = vi.fn<() => boolean>().mockReturnValueOnce(false).mockReturnValue(true);
  return { recordRequest: () => undefined, tryRetry, snapshot: () => ({ requests: 0, retries: 0, available: 1 }), retryAfterInMs: () => 0 };
}

const retry = fixedBackoff({ maxRetries: 3, delayInMs: 10 });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the retry budget follows the admission a retry is sent on", () => {
  it("a retry sent unpaced after a paced attempt is counted against the budget", async () => {
    const budget = createRetryBudget();
    const tryRetry = vi.spyOn(budget, "tryRetry");
    const next = scripted(503, 200);
    const gate = gateOf({ decision: "send", paced: true }, SEND_NOW);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retryBudget: budget, retry }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(100);
    expect((await pending).status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
    expect(tryRetry).toHaveBeenCalledTimes(1);
    expect(tryRetry).toHaveReturnedWith(true);
    // Given back when it succeeded: a retry that worked multiplied no load.
    expect(budget.snapshot().retries).toBe(0);
  });

  it("a retry sent paced after an unpaced attempt goes with the budget empty, and spends nothing", async () => {
    const budget = emptyBudget();
    const next = scripted(503, 200);
    const gate = gateOf(SEND_NOW, { decision: "send", paced: true });
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retryBudget: budget, retry, maxElapsedInMs: 1_000 }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(1_100);
    expect((await pending).status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
    expect(budget.tryRetry).not.toHaveBeenCalled();
  });

  it("a retry that waited for its paced turn is let go paced, without asking the budget", async () => {
    const budget = emptyBudget();
    const next = scripted(503, 200);
    const gate = gateOf(SEND_NOW, waitOf("pacing", 30));
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retryBudget: budget, retry, maxElapsedInMs: 1_000 }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(1_100);
    expect((await pending).status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
    expect(budget.tryRetry).not.toHaveBeenCalled();
    expect(gate.release).not.toHaveBeenCalled();
  });
});

describe("the budget's answer at send time is obeyed", () => {
  it("open loop: refused at send time, the retry defers and goes when the budget grants; the admission is given back meanwhile", async () => {
    const budget = racedBudget();
    const next = scripted(503, 200);
    const probe: Send = { decision: "send", probe: true };
    const gate = gateOf(SEND_NOW, probe);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retryBudget: budget, retry }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(200);
    expect((await pending).status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
    expect(budget.tryRetry).toHaveBeenCalledTimes(2);
    expect(gate.release).toHaveBeenCalledTimes(1);
    expect(gate.release.mock.calls[0]?.[1]).toBe(probe);
  });

  it("failFast: refused at send time, the retry is not sent: the operation stops budget-exhausted", async () => {
    const budget = racedBudget();
    const next = scripted(503, 200);
    const pending = resilientRetryPolicy({ gate: asGateOption(gateOf()), retryBudget: budget, retry, caller: { failFast: true } })
      .sendRequest(request(), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(200);
    const outcome = (await pending) as PipelineResponse;
    expect(outcome.status).toBe(503);
    expect(getRetryInfo(outcome)?.stopReason).toBe("budget-exhausted");
    expect(next).toHaveBeenCalledTimes(1);
  });
});

describe("a paced wait not sent on is given back to the gate", () => {
  it("bounded: a waiter let go during its paced wait gives its wait back", async () => {
    const slot: Wait = waitOf("pacing", 1_000);
    const gate = gateOf(slot, SEND_NOW);
    const policy = resilientRetryPolicy({ gate: asGateOption(gate), caller: { concurrency: 2 } });
    const waiting = policy.sendRequest(request(), scripted(200)).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    // Healthy work takes the other slot: the waiter is let go at its next check.
    void policy.sendRequest(request(), () => new Promise<PipelineResponse>(() => undefined));
    await vi.advanceTimersByTimeAsync(300);
    expect(await waiting).toMatchObject({ code: "PARTITION_BUSY" });
    expect(gate.release).toHaveBeenCalledTimes(1);
    expect(gate.release.mock.calls[0]?.[1]).toBe(slot);
  });
});
