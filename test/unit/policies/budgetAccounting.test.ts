// Review 2 (issue 23 fixes, c7f225d): the retry budget is spent at send time from the admission
// the retry goes on. Two ways around it remain: a read sent to the secondary after a *paced*
// primary attempt failed (attemptFacts forecasts the budget "free" from the failed attempt's
// admission, and startSend spends only on "available"; the secondary is never paced), and a
// budget whose retryAfterInMs() answers 0 while tryRetry() refuses (the public RetryBudget
// interface allows it), which the open loop re-asks every 1-2 ms for its whole deadline.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createRetryBudget, fixedBackoff, resilientRetryPolicy, type RetryBudget } from "../../../src/index.js";
import type { AttemptGate } from "../../../src/breaker/attemptGate.js";
import { asGateOption } from "../../support/scriptedGate.js";

const PRIMARY = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const reply = (req: PipelineRequest, status: number, headers: Record<string, string> = {}): PipelineResponse => ({ request: req, status, headers: createHttpHeaders(headers) });
const busy = (req: PipelineRequest) => reply(req, 503, { "x-ms-error-code": "ServerBusy" });

describe("the retry budget counts every retry sent", () => {
  it("a secondary read after a paced primary attempt failed is a retry the budget counts (a budget with no tokens refuses it)", async () => {
    // A paced partition: every primary attempt goes on a paced slot that is free now.
    const pacedGate: AttemptGate = {
      admit: () => ({ decision: "send", delayInMs: 0, paced: true, ticket: {} }),
      record: () => undefined,
    };
    // No tokens at all: no unpaced retry may go.
    const budget = createRetryBudget({ retryRatio: 0, minRetriesPerSecond: 0 });
    const urls: string[] = [];
    const next = vi.fn<SendRequest>(async (req) => {
      urls.push(req.url);
      return req.url.includes("-secondary") ? reply(req, 200) : busy(req);
    });
    const pending = resilientRetryPolicy({ gate: asGateOption(pacedGate), secondaryReads: true, retryBudget: budget, retry: fixedBackoff({ maxRetries: 2, delayInMs: 100 }) })
      .sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5_000);
    await pending;
    const secondaryReads = urls.filter((u) => u.includes("-secondary")).length;
    // Either the read was refused (no secondary read), or it was counted: never a retry sent uncounted.
    expect(budget.snapshot().retries).toBeGreaterThanOrEqual(secondaryReads);
  });
});

describe("a retry that succeeds gives its budget back", () => {
  it("after a mass failure, each successful retry frees a retry for the next operation waiting on the budget", async () => {
    // Room for one retry at a time: every operation's first attempt fails once, then succeeds.
    const budget = createRetryBudget({ retryRatio: 0, minRetriesPerSecond: 0.1 });
    const failedOnce = new Set<string>();
    const next = vi.fn<SendRequest>(async (req) => {
      if (failedOnce.has(req.url)) return reply(req, 200);
      failedOnce.add(req.url);
      return busy(req);
    });
    const policy = resilientRetryPolicy({ retryBudget: budget, retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }) });
    const statuses: number[] = [];
    const controller = new AbortController();
    for (let i = 0; i < 5; i++) {
      const request = createPipelineRequest({ url: PRIMARY.replace("r1", `r${i}`), method: "GET", abortSignal: controller.signal });
      void policy.sendRequest(request, next).then((r) => statuses.push(r.status), () => statuses.push(0));
    }
    await vi.advanceTimersByTimeAsync(2_000);
    // Without the refund, the one retry in the window is spent and the other four wait for it to expire (10 s).
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(budget.snapshot().retries).toBe(0);
    controller.abort();
  });
});

describe("an open loop deferring on an empty budget does not poll it in a tight loop", () => {
  it("a budget that refuses while answering retryAfterInMs() = 0: asked again no more often than every 10 ms (MIN_CIRCUIT_WAIT_IN_MS)", async () => {
    let asked = 0;
    const refusing: RetryBudget = {
      recordRequest: () => undefined,
      tryRetry: () => {
        asked += 1;
        return false;
      },
      snapshot: () => ({ requests: 0, retries: 0, available: 0 }),
      retryAfterInMs: () => 0,
    };
    const next = vi.fn<SendRequest>(async (req) => busy(req));
    const pending = resilientRetryPolicy({ retryBudget: refusing, maxElapsedInMs: 2_000, retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }), random: () => 0 })
      .sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(3_000);
    await pending;
    expect(next).toHaveBeenCalledTimes(1);
    // ~2 s of deferral: one ask per 10 ms at most is 200; a 1-ms floor gives ~2,000.
    expect(asked).toBeLessThanOrEqual(200);
  });
});
