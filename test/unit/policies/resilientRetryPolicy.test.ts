import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WakeList } from "../../../src/timing/wake.js";
import { Readable } from "node:stream";
import {
  createHttpHeaders,
  createPipelineRequest,
  RestError,
  type PipelineRequest,
  type PipelineResponse,
  type SendRequest,
} from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, isCircuitOpenError, resilientRetryPolicy, type RetryObserver } from "../../../src/index.js";
import { resilientRetryPolicyName } from "../../../src/policies/resilientRetryPolicy.js";
import { type AttemptGate } from "../../../src/breaker/attemptGate.js";
import { SEND_NOW, type Admission, type Send } from "../../../src/breaker/attemptGate.js";
import type { AttemptResult } from "../../../src/classification/attemptResult.js";
import { isPartitionBusyError } from "../../../src/errors/partitionBusyError.js";
import { asGateOption, gateOf, waitOf } from "../../support/scriptedGate.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";

function request(init: Partial<Parameters<typeof createPipelineRequest>[0]> = {}): PipelineRequest {
  return createPipelineRequest({ url, method: "GET", ...init });
}

function reply(req: PipelineRequest, status: number, headers: Record<string, string> = {}): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders(headers) };
}

function serverBusy(req: PipelineRequest, extra: Record<string, string> = {}): PipelineResponse {
  return reply(req, 503, { "x-ms-error-code": "ServerBusy", ...extra });
}

/** A `next` that answers from a script, one entry per attempt. */
function scripted(...steps: Array<(req: PipelineRequest) => PipelineResponse | Error>) {
  return vi.fn<SendRequest>(async (req) => {
    const step = steps.shift();
    if (!step) throw new Error("unexpected extra attempt");
    const result = step(req);
    if (result instanceof Error) throw result;
    return result;
  });
}

const ok = (req: PipelineRequest) => reply(req, 200);
/** A transport that answers nothing until the request's signal aborts. */
function hangUntilAborted(req: PipelineRequest): Promise<PipelineResponse> {
  return new Promise((_resolve, reject) => {
    req.abortSignal?.addEventListener("abort", () => reject(Object.assign(new Error("The operation was aborted."), { name: "AbortError" })));
  });
}
const busy = (req: PipelineRequest) => serverBusy(req);
const reset = () => new RestError("socket hang up", { code: "ECONNRESET" });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("resilientRetryPolicy", () => {
  it("has its name", () => {
    expect(resilientRetryPolicy().name).toBe(resilientRetryPolicyName);
  });

  it("retries 503 ServerBusy twice then succeeds: 3 attempts", async () => {
    const next = scripted(busy, busy, ok);
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 5, delayInMs: 100 }) });
    const req = request();
    const pending = policy.sendRequest(req, next);
    await vi.advanceTimersByTimeAsync(99);
    expect(next).toHaveBeenCalledTimes(2 - 1);
    await vi.advanceTimersByTimeAsync(1);
    expect(next).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(100);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(next).toHaveBeenCalledTimes(3);
    expect(getRetryInfo(response)).toMatchObject({
      attempts: 3,
      classes: ["throttled", "throttled", "success"],
      stopReason: "success",
    });
  });

  it.each([403, 404, 409, 501, 505])("does not retry %i", async (status) => {
    const next = scripted((req) => reply(req, status));
    const response = await resilientRetryPolicy().sendRequest(request(), next);
    expect(response.status).toBe(status);
    expect(next).toHaveBeenCalledTimes(1);
    expect(getRetryInfo(response)?.stopReason).toBe("permanent");
  });

  it("retries a connection reset", async () => {
    const next = scripted(reset, ok);
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 10 }) }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(10);
    expect((await pending).status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
  });

  it("returns the last response unchanged when retries run out", async () => {
    const next = scripted(busy, busy, busy);
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 2, delayInMs: 10 }) }).sendRequest(
      request(),
      next,
    );
    await vi.advanceTimersByTimeAsync(20);
    const response = await pending;
    expect(response.status).toBe(503);
    expect(response.headers.get("x-ms-error-code")).toBe("ServerBusy");
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, stopReason: "retries-exhausted" });
  });

  it("rethrows the last RestError unchanged when retries run out, with its info", async () => {
    const errors = [reset(), reset()];
    const next = vi.fn<SendRequest>(async (req) => {
      const error = errors.shift()!;
      error.request = req;
      throw error;
    });
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 1, delayInMs: 10 }) }).sendRequest(
      request(),
      next,
    );
    const assertion = expect(pending).rejects.toMatchObject({ code: "ECONNRESET", name: "RestError" });
    await vi.advanceTimersByTimeAsync(10);
    await assertion;
    const error = await pending.catch((e: unknown) => e);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 2, stopReason: "retries-exhausted" });
  });

  it("waits for Retry-After when it is longer than the backoff", async () => {
    const next = scripted((req) => serverBusy(req, { "Retry-After": "2" }), ok);
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 100 }), maxRetryAfterInMs: 5000 });
    const pending = policy.sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(1999);
    expect(next).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(200);
  });

  it("honours x-ms-retry-after-ms", async () => {
    const next = scripted((req) => serverBusy(req, { "x-ms-retry-after-ms": "750" }), ok);
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 100 }), maxRetryAfterInMs: 5000 }).sendRequest(
      request(),
      next,
    );
    await vi.advanceTimersByTimeAsync(749);
    expect(next).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    await pending;
    expect(next).toHaveBeenCalledTimes(2);
  });

  it("caps a server's Retry-After at the strategy's maximum delay by default", async () => {
    const next = scripted((req) => serverBusy(req, { "Retry-After": "3600" }), ok);
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 300 }) }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(300);
    expect((await pending).status).toBe(200);
  });

  it("rejects promptly on abort during a backoff, with no further attempt", async () => {
    const next = scripted(busy, ok);
    const controller = new AbortController();
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 10_000 }) }).sendRequest(
      request({ abortSignal: controller.signal }),
      next,
    );
    const assertion = expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await vi.advanceTimersByTimeAsync(50);
    controller.abort();
    await assertion;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(next).toHaveBeenCalledTimes(1);
  });

  it("makes no attempt when already aborted", async () => {
    const next = scripted(ok);
    const controller = new AbortController();
    controller.abort();
    await expect(resilientRetryPolicy().sendRequest(request({ abortSignal: controller.signal }), next)).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(next).not.toHaveBeenCalled();
  });

  it("never retries a caller's abort that surfaces from the transport", async () => {
    const controller = new AbortController();
    const next = vi.fn<SendRequest>(async () => {
      controller.abort();
      const error = new Error("The operation was aborted.");
      error.name = "AbortError";
      throw error;
    });
    await expect(
      resilientRetryPolicy({ tryTimeoutInMs: 1000 }).sendRequest(request({ abortSignal: controller.signal }), next),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(next).toHaveBeenCalledTimes(1);
  });

  it("gives up when the next wait would pass the deadline", async () => {
    const next = scripted(busy, busy, busy, ok);
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 10, delayInMs: 600 }), maxElapsedInMs: 1000 });
    const pending = policy.sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(600);
    const response = await pending;
    expect(response.status).toBe(503);
    expect(next).toHaveBeenCalledTimes(2);
    expect(getRetryInfo(response)?.stopReason).toBe("deadline");
  });

  it("times out a hanging attempt, classifies it timeout and retries", async () => {
    let calls = 0;
    const next = vi.fn<SendRequest>((req) => {
      calls += 1;
      return calls > 1 ? Promise.resolve(reply(req, 200)) : hangUntilAborted(req);
    });
    const callerSignal = new AbortController().signal;
    const req = request({ abortSignal: callerSignal });
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 10 }), tryTimeoutInMs: 500 }).sendRequest(req, next);
    await vi.advanceTimersByTimeAsync(510);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(getRetryInfo(response)?.classes).toEqual(["timeout", "success"]);
    expect(req.abortSignal).toBe(callerSignal);
  });

  it("gives the last attempt only the time left before maxElapsedInMs", async () => {
    const abortedAt: number[] = [];
    const next = vi.fn<SendRequest>((req) => hangUntilAborted(req).catch((e: unknown) => {
      abortedAt.push(Date.now() - started);
      throw e;
    }));
    const started = Date.now();
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 50, maxRetries: 5 }), tryTimeoutInMs: 400, maxElapsedInMs: 1000 })
      .sendRequest(request(), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    const error = await pending;
    expect(abortedAt).toEqual([400, 850, 1000]);
    expect(error).toMatchObject({ code: "ETIMEDOUT", message: /maxElapsedInMs/ });
  });

  it("times out concurrent attempts each at its own deadline, on one timer", async () => {
    const policy = resilientRetryPolicy({ retry: { strategy: "none" }, tryTimeoutInMs: 300 });
    const settledAt: number[] = [];
    const started = Date.now();
    const pendings = [0, 100, 200].map(async (offset) => {
      await new Promise((resolve) => setTimeout(resolve, offset));
      await policy.sendRequest(request(), (req) => hangUntilAborted(req)).catch(() => settledAt.push(Date.now() - started));
    });
    await vi.advanceTimersByTimeAsync(150);
    expect(vi.getTimerCount()).toBe(2); // the third caller's start, and one deadline timer for the two in flight
    await vi.advanceTimersByTimeAsync(400);
    await Promise.all(pendings);
    expect(settledAt).toEqual([300, 400, 500]);
  });

  it("surfaces our per-attempt timeout as a RestError ETIMEDOUT naming the option", async () => {
    const next = vi.fn<SendRequest>((req) => hangUntilAborted(req));
    const pending = resilientRetryPolicy({ retry: { strategy: "none" }, tryTimeoutInMs: 200 }).sendRequest(request(), next);
    const assertion = expect(pending).rejects.toMatchObject({ name: "RestError", code: "ETIMEDOUT", message: /tryTimeoutInMs/ });
    await vi.advanceTimersByTimeAsync(200);
    await assertion;
  });

  it("does not retry a request whose body is a consumed stream", async () => {
    const next = scripted(busy, ok);
    const response = await resilientRetryPolicy().sendRequest(
      request({ method: "PUT", body: Readable.from(["data"]) }),
      next,
    );
    expect(response.status).toBe(503);
    expect(next).toHaveBeenCalledTimes(1);
    expect(getRetryInfo(response)?.stopReason).toBe("body-not-replayable");
  });

  it("retries a request whose body is a stream factory", async () => {
    const next = scripted(busy, ok);
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 1 }) }).sendRequest(
      request({ method: "PUT", body: () => Readable.from(["data"]) }),
      next,
    );
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(200);
  });

  it("reports typed events to observers and survives one that throws", async () => {
    const events: string[] = [];
    const observer: RetryObserver = {
      onAttempt: (e) => events.push(`attempt ${e.attempt} ${e.attemptClass} ${e.status}`),
      onRetry: (e) => events.push(`retry after ${e.attempt} ${e.reason} ${e.delayInMs} ${e.delaySource}`),
      onOperationEnd: (e) => events.push(`end ${e.attempts} ${e.finalClass} ${e.stopReason}`),
    };
    const throwing: RetryObserver = {
      onAttempt: () => {
        throw new Error("observer bug");
      },
    };
    const next = scripted(busy, ok);
    const pending = resilientRetryPolicy({
      retry: fixedBackoff({ delayInMs: 5 }),
      observers: [throwing, observer],
    }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(5);
    await pending;
    expect(events).toEqual([
      "attempt 1 throttled 503",
      "retry after 1 throttled 5 backoff",
      "attempt 2 success 200",
      "end 2 success success",
    ]);
  });

  it("passes every event the operation's address, read once: the same object throughout", async () => {
    const addresses = new Set<unknown>();
    const observer: RetryObserver = {
      onAttempt: (e) => addresses.add(e.address),
      onRetry: (e) => addresses.add(e.address),
      onOperationEnd: (e) => addresses.add(e.address),
    };
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 5 }), observers: [observer] }).sendRequest(request(), scripted(busy, ok));
    await vi.advanceTimersByTimeAsync(5);
    await pending;
    expect(addresses.size).toBe(1);
    const [address] = [...addresses] as Array<{ operation: string }>;
    expect(address?.operation).toBe("get_entity");
  });

  it("reads an observer's hooks once, when the policy is made, and calls them with the observer as this", async () => {
    class Counting implements RetryObserver {
      ends = 0;
      onOperationEnd(): void {
        this.ends += 1;
      }
    }
    const counting = new Counting();
    const late = vi.fn();
    const plain: RetryObserver = {};
    const policy = resilientRetryPolicy({ observers: [counting, plain] });
    plain.onOperationEnd = late;
    await policy.sendRequest(request(), scripted(ok));
    expect(counting.ends).toBe(1);
    expect(late).not.toHaveBeenCalled();
  });

  it("applies user classification rules", async () => {
    const next = scripted((req) => reply(req, 409), ok);
    const pending = resilientRetryPolicy({
      retry: fixedBackoff({ delayInMs: 1 }),
      classification: { retriableStatusCodes: [409] },
    }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(200);
  });
});

describe("resilientRetryPolicy with a gate (circuit breaker)", () => {
  /**
   * A gate whose partition serves nothing for its first `refusals` asks, as an open circuit: each
   * is a wait for its probe `retryAfterInMs` away, or a refusal when the caller may not wait that
   * long. Records what it is told.
   */
  function gate(refusals: number, retryAfterInMs = 1000): AttemptGate & { refused: number; recorded: string[] } {
    let remaining = refusals;
    return {
      refused: 0,
      recorded: [],
      admit(_address, ask): Admission {
        if (remaining <= 0) return SEND_NOW;
        remaining -= 1;
        this.refused += 1;
        if (retryAfterInMs <= ask.queueForInMs) return waitOf("circuit", retryAfterInMs);
        return { decision: "refuse", reason: "circuit-open", scope: "table|acct|orders|p1", retryAfterInMs };
      },
      record(_address, _admission, result: AttemptResult) {
        this.recorded.push(result.outcomeClass);
      },
    };
  }

  it("fails fast with CircuitOpenError for a failFast caller, without touching the network", async () => {
    const next = scripted(ok);
    const error = await resilientRetryPolicy({ gate: asGateOption(gate(1)), caller: { failFast: true } }).sendRequest(request(), next).catch((e: unknown) => e);
    expect(isCircuitOpenError(error)).toBe(true);
    expect(next).not.toHaveBeenCalled();
  });

  it("waits for the probe time for an open-loop caller (the default) without spending retries", async () => {
    const g = gate(3, 1000);
    const next = scripted(ok);
    const pending = resilientRetryPolicy({ gate: asGateOption(g), retry: { strategy: "none" }, random: () => 0 }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(2999);
    expect(next).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(g.refused).toBe(3);
    expect(getRetryInfo(response)?.classes).toEqual(["circuit_open", "circuit_open", "circuit_open", "success"]);
  });

  it("gives up when the probe time is past the deadline", async () => {
    const next = scripted(ok);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate(1, 5000)), maxElapsedInMs: 1000 }).sendRequest(request(), next);
    await expect(pending).rejects.toMatchObject({ code: "CIRCUIT_OPEN" });
    expect(next).not.toHaveBeenCalled();
  });
});

describe("resilientRetryPolicy with a bounded caller (caller: { concurrency })", () => {
  const dead = "https://acct.table.core.windows.net/orders(PartitionKey='dead',RowKey='r')";
  const healthy = "https://acct.table.core.windows.net/orders(PartitionKey='ok',RowKey='r')";
  /** A gate whose `dead` partition serves nothing: its next probe, 1 s away, is waited for by whoever may wait that long. */
  const gate: AttemptGate = {
    admit: (address, ask) => {
      if (address.request.url !== dead) return SEND_NOW;
      return ask.queueForInMs >= 1000 ? waitOf("circuit", 1000) : { decision: "refuse", reason: "circuit-open", scope: "table|acct|orders|dead", retryAfterInMs: 1000 };
    },
    record: () => undefined,
  };

  it("N = 4: waiters take the spare slots (N - R = 3); the next fails at once with retryAfterInMs; healthy work lets the newest go", async () => {
    const refusals: string[] = [];
    const policy = resilientRetryPolicy({ gate: asGateOption(gate), caller: { concurrency: 4 }, random: () => 0, observers: [{ onOperationEnd: (e) => void refusals.push(e.stopReason) }] });
    const never = vi.fn<SendRequest>(async () => {
      throw new Error("nothing is sent to the dead partition");
    });
    const settled: Array<unknown> = [];
    const waiting = [0, 1, 2].map((i) => policy.sendRequest(request({ url: dead }), never).catch((e: unknown) => (settled[i] = e)));
    const fourth = await policy.sendRequest(request({ url: dead }), never).catch((e: unknown) => e);
    expect(isCircuitOpenError(fourth)).toBe(true);
    expect(fourth).toMatchObject({ retryAfterInMs: 1000 });
    expect(getRetryInfo(fourth)).toMatchObject({ stopReason: "circuit-open", retryAfterInMs: 1000 });
    expect(refusals).toEqual(["circuit-open"]);
    // Healthy work takes a slot while it is in flight: the newest waiter is let go within a quarter second.
    let answer: (r: PipelineResponse) => void = () => undefined;
    const slow = vi.fn<SendRequest>((req) => new Promise((resolve) => (answer = () => resolve(reply(req, 200)))));
    const healthyOp = policy.sendRequest(request({ url: healthy }), slow);
    await vi.advanceTimersByTimeAsync(250);
    expect(settled[2]).toSatisfy(isCircuitOpenError);
    expect(settled[0]).toBeUndefined();
    expect(settled[1]).toBeUndefined();
    answer(reply(request(), 200));
    expect((await healthyOp).status).toBe(200);
    expect(never).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(60_000);
    await Promise.all(waiting);
  });

  it("a backoff needs a spare slot too: without one, the real failure surfaces at once (caller-busy) with retryAfterInMs", async () => {
    const policy = resilientRetryPolicy({ caller: { concurrency: 1 }, retry: fixedBackoff({ maxRetries: 3, delayInMs: 800 }) });
    const next = scripted(serverBusy);
    const response = await policy.sendRequest(request(), next);
    expect(response.status).toBe(503);
    expect(getRetryInfo(response)).toMatchObject({ stopReason: "caller-busy", retryAfterInMs: 800, attempts: 1 });
  });
});

describe("resilientRetryPolicy option validation", () => {
  it.each([
    [{ maxElapsedInMs: 0 }, /maxElapsedInMs.*0/],
    [{ maxElapsedInMs: -1 }, /maxElapsedInMs.*-1/],
    [{ tryTimeoutInMs: Number.NaN }, /tryTimeoutInMs.*NaN/],
    [{ maxRetryAfterInMs: -5 }, /maxRetryAfterInMs.*-5/],
    [{ retry: { strategy: "sometimes" } }, /retry\.strategy/],
    [{ classification: { retriableStatusCodes: [999] } }, /retriableStatusCodes.*999/],
    [{ classification: { retriableErrorCodes: "ServerBusy" } }, /retriableErrorCodes/],
    [{ maxElapsed: 5 }, /maxElapsed is not a known option/],
    [{ gate: {} }, /gate/],
    [{ observers: {} }, /observers/],
    [{ caller: { concurrency: 0 } }, /caller\.concurrency/],
    [{ caller: null }, /caller must be an options object/],
  ])("rejects %o", (options, message) => {
    expect(() => resilientRetryPolicy(options as never)).toThrow(message);
  });

  it("accepts Infinity as no deadline", () => {
    expect(() => resilientRetryPolicy({ maxElapsedInMs: Infinity })).not.toThrow();
  });
});

describe("resilientRetryPolicy's circuit waits", () => {
  it("waits until the probe is due for an open circuit, whatever the random source says", async () => {
    const gate = gateOf(waitOf("circuit", 1000));
    const next = scripted(ok);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), random: () => 0.5 }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(999);
    expect(next).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(200);
  });

  it("a waiter on a refused circuit is woken by the gate at once, and asks again then", async () => {
    const wake = new WakeList();
    let open = true;
    const gate: AttemptGate = {
      admit: () => (open ? waitOf("circuit", 300, wake) : SEND_NOW),
      record: () => {},
    };
    const next = scripted(ok);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), random: () => 0.5 }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(100);
    expect(next).not.toHaveBeenCalled();
    open = false;
    wake.wakeAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(next).toHaveBeenCalledTimes(1);
    expect((await pending).status).toBe(200);
  });

  it("a backoff after a failure is woken by the gate when its partition's circuit closes, and the retry goes at once", async () => {
    const wake = new WakeList();
    const gate: AttemptGate = { admit: () => SEND_NOW, record: () => {}, wakeOf: () => wake };
    const next = scripted(serverBusy, ok);
    const retry = fixedBackoff({ maxRetries: 3, delayInMs: 5_000 });
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retry }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(300);
    expect(next).toHaveBeenCalledTimes(1);
    wake.wakeAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(next).toHaveBeenCalledTimes(2);
    expect((await pending).status).toBe(200);
  });

  it("a paced waiter is woken by the gate at once when its queue is let out", async () => {
    const wake = new WakeList();
    let asked = 0;
    const gate: AttemptGate = {
      admit: (_address, ask) => (asked++ === 0 ? waitOf("pacing", 500, wake) : { decision: "send", paced: ask.waited !== undefined }),
      record: () => {},
    };
    const next = scripted(ok);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate) }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(100);
    expect(next).not.toHaveBeenCalled();
    wake.wakeAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(next).toHaveBeenCalledTimes(1);
    expect(asked).toBe(2);
    expect((await pending).status).toBe(200);
  });

  it("rejects a random source that is not a function", () => {
    expect(() => resilientRetryPolicy({ random: 0.5 as never })).toThrow(/random must be a function/);
  });
});

describe("resilientRetryPolicy with a pacing gate", () => {
  it("reports every attempt it sent to the gate, with the admission it was sent on", async () => {
    const seen: Array<{ admission: Send; outcomeClass: string }> = [];
    // Not the shared SEND_NOW: the gate's own value, handed back as it was.
    const admission: Send = { decision: "send", paced: true };
    const g: AttemptGate = {
      admit: () => admission,
      record: (_address, given, result) => seen.push({ admission: given, outcomeClass: result.outcomeClass }),
    };
    const pending = resilientRetryPolicy({ gate: asGateOption(g), retry: fixedBackoff({ delayInMs: 10, maxRetries: 3 }) }).sendRequest(request(), scripted(serverBusy, ok));
    await vi.advanceTimersByTimeAsync(100);
    expect((await pending).status).toBe(200);
    expect(seen).toEqual([
      { admission, outcomeClass: "throttled" },
      { admission, outcomeClass: "success" },
    ]);
    expect(seen.every((s) => s.admission === admission)).toBe(true);
  });

  it("waits the paced delay before sending", async () => {
    const g = gateOf(waitOf("pacing", 250));
    const next = scripted(ok);
    const pending = resilientRetryPolicy({ gate: asGateOption(g) }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(249);
    expect(next).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(200);
  });

  it("waits a paced wait handed out in parts (asked again, the rest of the wait) and sends when the gate lets it go", async () => {
    const asks: number[] = [];
    const g: AttemptGate = {
      admit: (_address, ask) => {
        asks.push(Date.now());
        if (ask.waited === undefined) return waitOf("pacing", 500);
        // Asked again: 300 ms more the first time, then let go.
        return asks.length === 2 ? waitOf("pacing", 300) : { decision: "send", paced: true };
      },
      record: () => {},
    };
    const next = scripted(ok);
    const paced: number[] = [];
    const start = Date.now();
    const pending = resilientRetryPolicy({ gate: asGateOption(g), observers: [{ onAttempt: (e) => paced.push(e.pacedDelayInMs ?? 0) }] }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(799);
    expect(next).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(200);
    expect(asks.map((t) => t - start)).toEqual([0, 500, 800]);
    // The attempt's paced delay is the whole wait, both slices.
    expect(paced).toEqual([800]);
  });

  it("fails at once with PartitionBusyError, carrying retryAfterInMs, when the paced queue outlasts the deadline", async () => {
    let asked = -1;
    const g: AttemptGate = {
      admit: (_address, ask) => {
        asked = ask.queueForInMs;
        return { decision: "refuse", reason: "paced", scope: "table|acct|orders|hot", retryAfterInMs: 7000 };
      },
      record: () => {},
    };
    const next = scripted(ok);
    const error = await resilientRetryPolicy({ gate: asGateOption(g), maxElapsedInMs: 5000 }).sendRequest(request(), next).catch((e: unknown) => e);
    expect(isPartitionBusyError(error)).toBe(true);
    expect(error).toMatchObject({ code: "PARTITION_BUSY", scope: "table|acct|orders|hot", retryAfterInMs: 7000 });
    expect(asked).toBe(5000);
    expect(next).not.toHaveBeenCalled();
    expect(getRetryInfo(error)).toMatchObject({ stopReason: "partition-busy", retryAfterInMs: 7000, attempts: 0 });
  });
});
