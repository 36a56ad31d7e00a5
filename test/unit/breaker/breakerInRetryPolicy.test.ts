import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { fixedBackoff } from "../../../src/backoff/fixedBackoff.js";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { isCircuitOpenError } from "../../../src/errors/circuitOpenError.js";
import { SEND_NOW } from "../../../src/breaker/attemptGate.js";
import { resilientRetryPolicy } from "../../../src/policies/resilientRetryPolicy.js";
import { getRetryInfo } from "../../../src/policies/retryInfo.js";

const HOST = "https://acct.table.core.windows.net";
const OFFLINE_UNTIL_IN_MS = 8_000;
const RESET_IN_MS = 2_000;

/** A service where partition "hot" answers 503 ServerBusy until OFFLINE_UNTIL_IN_MS; every call is logged with its time. */
function partitionService(calls: Array<{ pk: string; at: number }>, start: number): SendRequest {
  return vi.fn<SendRequest>(async (request) => {
    const pk = /PartitionKey='([^']*)'/.exec(request.url)?.[1] ?? "";
    const at = Date.now() - start;
    calls.push({ pk, at });
    const offline = pk === "hot" && at < OFFLINE_UNTIL_IN_MS;
    const headers = createHttpHeaders(offline ? { "x-ms-error-code": "ServerBusy" } : {});
    return { request, status: offline ? 503 : 204, headers } satisfies PipelineResponse;
  });
}

function send(policy: ReturnType<typeof resilientRetryPolicy>, next: SendRequest, pk: string) {
  const request = createPipelineRequest({ url: `${HOST}/orders(PartitionKey='${pk}',RowKey='r')`, method: "PUT" });
  return policy.sendRequest(request, next);
}

let breaker: PartitionBreaker | undefined;
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  breaker?.dispose();
  vi.useRealTimers();
});

describe("partition breaker inside resilientRetryPolicy", () => {
  it("an open-loop caller (the default): every caller of the offline partition succeeds after it returns, with at most one probe per reset period", async () => {
    breaker = createPartitionBreaker({ resetTimeoutInMs: RESET_IN_MS });
    const opened: number[] = [];
    const start = Date.now();
    breaker.onTransition((t) => t.to === "open" && opened.push(Date.now() - start));
    const policy = resilientRetryPolicy({ gate: breaker, retry: fixedBackoff({ maxRetries: 1_000, delayInMs: 100 }), maxElapsedInMs: 60_000 });
    const calls: Array<{ pk: string; at: number }> = [];
    const next = partitionService(calls, start);
    const hot = Array.from({ length: 20 }, () => send(policy, next, "hot"));
    const cool = Array.from({ length: 20 }, (_, i) => send(policy, next, `cool${i % 4}`));
    await vi.advanceTimersByTimeAsync(20_000);
    const statuses = await Promise.all([...hot, ...cool].map((p) => p.then((r) => r.status)));
    expect(statuses.every((s) => s === 204)).toBe(true);

    expect(opened.length).toBeGreaterThanOrEqual(1);
    const firstOpen = opened[0]!;
    // Attempts admitted to a paced slot before the circuit opened still go out when their slot comes
    // (one per caller at most); once the first probe is due, the offline partition sees only probes.
    const afterOpen = calls.filter((c) => c.pk === "hot" && c.at > firstOpen && c.at < OFFLINE_UNTIL_IN_MS);
    const probes = afterOpen.filter((c) => c.at >= firstOpen + RESET_IN_MS);
    expect(afterOpen.length - probes.length).toBeLessThan(20);
    const periods = Math.ceil((OFFLINE_UNTIL_IN_MS - firstOpen) / RESET_IN_MS);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.length).toBeLessThanOrEqual(periods);
    for (let i = 1; i < probes.length; i++) expect(probes[i]!.at - probes[i - 1]!.at).toBeGreaterThanOrEqual(RESET_IN_MS);
    expect(calls.filter((c) => c.pk.startsWith("cool"))).toHaveLength(20);
  });

  it("a failFast caller: callers get CircuitOpenError at once, without an attempt", async () => {
    breaker = createPartitionBreaker({ resetTimeoutInMs: RESET_IN_MS });
    const policy = resilientRetryPolicy({ gate: breaker, caller: { failFast: true }, retry: fixedBackoff({ maxRetries: 40, delayInMs: 10 }) });
    const calls: Array<{ pk: string; at: number }> = [];
    const next = partitionService(calls, Date.now());
    // The circuit opens once the partition has served nothing for a quarter second; with a real 503 in hand, the first caller gets that.
    const first = send(policy, next, "hot").catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await first).toMatchObject({ status: 503 });
    expect(breaker.openScopes()).toEqual(["table|acct|orders|hot"]);
    const before = calls.length;
    const error = await send(policy, next, "hot").catch((e: unknown) => e);
    expect(isCircuitOpenError(error)).toBe(true);
    expect(calls.length).toBe(before);
  });

  it("reads a request's scope once per operation, retries included, and again for a new operation", async () => {
    const getScope = vi.fn(() => "k");
    breaker = createPartitionBreaker({ getScope, consecutiveFailures: Infinity });
    const policy = resilientRetryPolicy({ gate: breaker, retry: fixedBackoff({ maxRetries: 2, delayInMs: 10 }) });
    const calls: Array<{ pk: string; at: number }> = [];
    const next = partitionService(calls, Date.now());
    const request = createPipelineRequest({ url: `${HOST}/orders(PartitionKey='hot',RowKey='r')`, method: "PUT" });
    const first = policy.sendRequest(request, next);
    await vi.advanceTimersByTimeAsync(100);
    expect((await first).status).toBe(503);
    expect(calls).toHaveLength(3);
    expect(getScope).toHaveBeenCalledTimes(1);
    const second = policy.sendRequest(request, next);
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(getScope).toHaveBeenCalledTimes(2);
  });

  it("a failFast caller: an operation whose attempt just opened its partition's circuit does not sleep out its backoff", async () => {
    breaker = createPartitionBreaker({ resetTimeoutInMs: RESET_IN_MS, pacing: false });
    const policy = resilientRetryPolicy({ gate: breaker, caller: { failFast: true }, retry: fixedBackoff({ maxRetries: 5, delayInMs: 10_000 }) });
    const next = vi.fn<SendRequest>(async (request) => ({ request, status: 503, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) }));
    const address = readRequestAddress(createPipelineRequest({ url: `${HOST}/orders(PartitionKey='hot',RowKey='r')`, method: "PUT" }));
    for (let i = 0; i < 4; i++) {
      breaker.record(address, SEND_NOW, { outcomeClass: "throttled", status: 503 });
      vi.advanceTimersByTime(100);
    }
    let settled: unknown;
    void send(policy, next, "hot").then((r) => (settled = r), (e: unknown) => (settled = e));
    // Its attempt (the fifth failure) opens the circuit; the gate would refuse the retry, so the 10 s backoff is not slept.
    await vi.advanceTimersByTimeAsync(10);
    expect(breaker.openScopes()).toEqual(["table|acct|orders|hot"]);
    expect(settled).toMatchObject({ status: 503 });
    expect(getRetryInfo(settled)?.stopReason).toBe("circuit-open");
    expect(next).toHaveBeenCalledTimes(1);
  });

  it("a retry that the empty budget holds back takes no probe: the circuit's probe stays free for one that can go", async () => {
    // A failFast caller ends at once on an empty budget (an open loop would wait for it); it asks the budget before the gate.
    breaker = createPartitionBreaker({ resetTimeoutInMs: RESET_IN_MS, pacing: false });
    let retriesLeft = true;
    const retryBudget = {
      recordRequest: () => undefined,
      tryRetry: () => retriesLeft,
      retryAfterInMs: () => (retriesLeft ? 0 : 1_000),
      snapshot: () => ({ requests: 0, retries: 0, available: retriesLeft ? 1 : 0 }),
    };
    const policy = resilientRetryPolicy({ gate: breaker, caller: { failFast: true }, retry: fixedBackoff({ maxRetries: 5, delayInMs: RESET_IN_MS }), retryBudget });
    let offline = true;
    const next = vi.fn<SendRequest>(async (request) => {
      const headers = createHttpHeaders(offline ? { "x-ms-error-code": "ServerBusy" } : {});
      return { request, status: offline ? 503 : 204, headers };
    });
    const address = readRequestAddress(createPipelineRequest({ url: `${HOST}/orders(PartitionKey='hot',RowKey='r')`, method: "PUT" }));
    // Four failures 100 ms apart; the operation below sends the fifth, which opens the circuit.
    for (let i = 0; i < 4; i++) {
      breaker.record(address, SEND_NOW, { outcomeClass: "throttled", status: 503 });
      vi.advanceTimersByTime(100);
    }
    retriesLeft = false;
    const first = send(policy, next, "hot");
    await vi.advanceTimersByTimeAsync(10);
    expect(breaker.openScopes()).toEqual(["table|acct|orders|hot"]);
    expect((await first).status).toBe(503);
    expect(getRetryInfo(await first)?.stopReason).toBe("budget-exhausted");
    expect(next).toHaveBeenCalledTimes(1);
    offline = false;
    retriesLeft = true;
    // A reset period later the probe is free: the next operation takes it, finds the partition back and closes the circuit.
    await vi.advanceTimersByTimeAsync(RESET_IN_MS);
    const later = send(policy, next, "hot");
    await vi.advanceTimersByTimeAsync(10);
    expect((await later).status).toBe(204);
    expect(breaker.stateOf("table|acct|orders|hot")).toBe("closed");
  });
});
