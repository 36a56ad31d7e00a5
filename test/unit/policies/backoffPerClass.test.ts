import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  RestError,
  type HttpClient,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, installResilience, resilientRetryPolicy, type RetryStrategy } from "../../../src/index.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";

type Answer = "ok" | "reset" | "busy" | "timedOut" | "internal";

/** An HttpClient answering from a script, one entry per attempt, that notes when each attempt came (fake clock). */
function scripted(...answers: Answer[]): HttpClient & { times: number[] } {
  const times: number[] = [];
  const start = Date.now();
  return {
    times,
    async sendRequest(request: PipelineRequest): Promise<PipelineResponse> {
      times.push(Date.now() - start);
      const answer = answers.shift();
      if (answer === undefined) throw new Error("unexpected extra attempt");
      const reply = (status: number, code?: string): PipelineResponse => ({
        request,
        status,
        headers: createHttpHeaders(code === undefined ? {} : { "x-ms-error-code": code }),
      });
      switch (answer) {
        case "ok":
          return reply(200);
        case "reset":
          throw new RestError("socket hang up", { code: "ECONNRESET", request });
        case "busy":
          return reply(503, "ServerBusy");
        case "timedOut":
          return reply(500, "OperationTimedOut");
        case "internal":
          return reply(500, "InternalError");
      }
    },
  };
}

/** The waits between attempts, from the attempts' times. */
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

async function run(pipelinePolicyOrInstall: (pipeline: ReturnType<typeof createEmptyPipeline>) => void, client: HttpClient) {
  const pipeline = createEmptyPipeline();
  pipelinePolicyOrInstall(pipeline);
  const pending = pipeline.sendRequest(client, createPipelineRequest({ url, method: "GET" })).then(
    (response) => ({ response, error: undefined }),
    (error: unknown) => ({ response: undefined, error }),
  );
  await vi.runAllTimersAsync();
  return pending;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("resilientRetryPolicy: backoff per outcome class", () => {
  const withBackoff = (options: Parameters<typeof resilientRetryPolicy>[0]) => (pipeline: ReturnType<typeof createEmptyPipeline>) =>
    pipeline.addPolicy(resilientRetryPolicy({ retryBudget: false, ...options }), { phase: "Retry" });

  it("waits each class's own backoff: a reset 20 ms, a throttle 1000 ms, a timeout 300 ms", async () => {
    const client = scripted("reset", "busy", "timedOut", "ok");
    const { response } = await run(
      withBackoff({
        retry: fixedBackoff({ maxRetries: 6, delayInMs: 1000 }),
        backoff: { transient: { strategy: "fixed", delayInMs: 20 }, timeout: { strategy: "fixed", delayInMs: 300 } },
      }),
      client,
    );
    expect(response?.status).toBe(200);
    expect(gaps(client.times)).toEqual([20, 1000, 300]);
  });

  it("numbers each class's retries on their own: a reset after two throttles is the reset curve's first retry", async () => {
    const client = scripted("busy", "busy", "reset", "reset", "ok");
    await run(
      withBackoff({
        retry: { strategy: "exponential", maxRetries: 6, baseDelayInMs: 100, minDelayInMs: 0, maxDelayInMs: 10_000, jitter: 0 },
        backoff: { transient: { strategy: "exponential", baseDelayInMs: 10, minDelayInMs: 0, maxDelayInMs: 10_000, jitter: 0 } },
      }),
      client,
    );
    // Throttled: 100 x (2^1 - 1), 100 x (2^2 - 1); transient from its own first retry: 10 x 1, 10 x 3.
    expect(gaps(client.times)).toEqual([100, 300, 10, 30]);
  });

  it("a class's maxRetries ends the operation after that many of its own retries, whatever others remain", async () => {
    const client = scripted("reset", "busy", "reset", "busy");
    const { error } = await run(
      withBackoff({
        retry: fixedBackoff({ maxRetries: 6, delayInMs: 50 }),
        backoff: { transient: { strategy: "fixed", delayInMs: 5, maxRetries: 1 } },
      }),
      client,
    );
    expect((error as RestError).code).toBe("ECONNRESET");
    expect(getRetryInfo(error)).toMatchObject({ attempts: 3, classes: ["transient", "throttled", "transient"], stopReason: "retries-exhausted" });
  });

  it("retry's maxRetries caps the operation across classes", async () => {
    const client = scripted("reset", "busy", "timedOut");
    const { response } = await run(
      withBackoff({
        retry: fixedBackoff({ maxRetries: 2, delayInMs: 50 }),
        backoff: { transient: { strategy: "fixed", delayInMs: 5 }, timeout: { strategy: "fixed", delayInMs: 5 } },
      }),
      client,
    );
    expect(response?.status).toBe(500);
    expect(getRetryInfo(response)?.attempts ?? client.times.length).toBe(3);
    expect(client.times).toHaveLength(3);
  });

  it("{ strategy: 'none' } for timeouts surfaces the first timeout while throttles are still retried", async () => {
    const client = scripted("busy", "timedOut");
    const { response } = await run(
      withBackoff({ retry: fixedBackoff({ maxRetries: 6, delayInMs: 50 }), backoff: { timeout: { strategy: "none" } } }),
      client,
    );
    expect(response?.status).toBe(500);
    expect(gaps(client.times)).toEqual([50]);
  });

  it("hands a decorrelated strategy its own previous wait, per operation", async () => {
    const previous: Array<number | undefined> = [];
    const recording: RetryStrategy = {
      kind: "decorrelated",
      maxRetries: 6,
      maxDelayInMs: 1000,
      delayInMs: (_retry, prev) => {
        previous.push(prev);
        return (prev ?? 0) + 7;
      },
    };
    const client = scripted("reset", "reset", "reset", "ok");
    const second = scripted("reset", "ok");
    const policy = resilientRetryPolicy({ retryBudget: false, retry: fixedBackoff({ maxRetries: 6, delayInMs: 1 }), backoff: { transient: recording } });
    const pipeline = createEmptyPipeline();
    pipeline.addPolicy(policy, { phase: "Retry" });
    const a = pipeline.sendRequest(client, createPipelineRequest({ url, method: "GET" }));
    const b = pipeline.sendRequest(second, createPipelineRequest({ url, method: "GET" }));
    await vi.runAllTimersAsync();
    await Promise.all([a, b]);
    expect(gaps(client.times)).toEqual([7, 14, 21]);
    // Two operations at once: each starts from 0, neither sees the other's waits.
    expect(previous.filter((p) => p === 0)).toHaveLength(2);
    expect(previous.sort()).toEqual([0, 0, 14, 7].sort());
  });

  it("a success never asks a strategy", async () => {
    const strategy: RetryStrategy = { kind: "fixed", maxRetries: 3, maxDelayInMs: 1, delayInMs: vi.fn(() => 1) };
    await run(withBackoff({ retry: strategy, backoff: { transient: strategy } }), scripted("ok"));
    expect(strategy.delayInMs).not.toHaveBeenCalled();
  });
});

describe("installResilience: the presets' backoff per class", () => {
  const install = (options: Parameters<typeof installResilience>[1] = {}) => (pipeline: ReturnType<typeof createEmptyPipeline>) => {
    installResilience(pipeline, { service: "table", metrics: false, circuitBreaker: false, retryBudget: false, ...options });
  };

  it("table: a reset is retried within tens of milliseconds; throttles and timeouts share the guidance's backoff", async () => {
    // The low end of every jitter range.
    vi.spyOn(Math, "random").mockReturnValue(0);
    const client = scripted("reset", "reset", "busy", "timedOut", "internal", "ok");
    const { response } = await run(install(), client);
    expect(response?.status).toBe(200);
    // transient: 10 + 32 x 1, 10 + 32 x 3; throttled then timeout, one curve: 375 + 300 x 1, 375 + 300 x 3; transient again: 10 + 32 x 7.
    expect(gaps(client.times)).toEqual([42, 106, 675, 1275, 234]);
  });

  it("the high end of the ranges: a reset's first retry waits 58 ms, not the 825 ms of a throttle", async () => {
    vi.spyOn(Math, "random").mockReturnValue(1);
    const client = scripted("reset", "busy", "ok");
    await run(install(), client);
    // 10 + 48 x 1; 375 + 450 x 1.
    expect(gaps(client.times)).toEqual([58, 825]);
  });

  it("an exponential retry config keeps the preset's per-class waits; a strategy of your own applies to every class", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const tuned = scripted("reset", "busy", "ok");
    await run(install({ retry: { strategy: "exponential", maxRetries: 4, baseDelayInMs: 500 } }), tuned);
    // baseDelayInMs 500 with the preset's minDelayInMs 375 and jitter 0.2: 375 + 400 x 1.
    expect(gaps(tuned.times)).toEqual([42, 775]);
    const own = scripted("reset", "busy", "ok");
    await run(install({ retry: { strategy: "fixed", delayInMs: 250 } }), own);
    expect(gaps(own.times)).toEqual([250, 250]);
  });

  it("backoff replaces the preset's: {} gives every class retry's waits; an exponential class config is completed from the preset's", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const uniform = scripted("reset", "timedOut", "ok");
    await run(install({ backoff: {} }), uniform);
    // retry (the guidance's) for both: retry 1 then retry 2.
    expect(gaps(uniform.times)).toEqual([675, 1275]);
    const completed = scripted("reset", "ok");
    await run(install({ backoff: { transient: { strategy: "exponential", baseDelayInMs: 100 } } }), completed);
    // baseDelayInMs 100 with the preset transient's minDelayInMs 10 and jitter 0.2: 10 + 80 x 1.
    expect(gaps(completed.times)).toEqual([90]);
  });

  it("blob: an exponential config for a class without preset numbers of its own is completed from blob's numbers, not the library's", async () => {
    // Found by a second reader: base 800 and cap 10 s (the library's) instead of blob's 1,000 and 30 s.
    const client = scripted("busy", "busy", "ok");
    await run((pipeline) => installResilience(pipeline, { service: "blob", metrics: false, circuitBreaker: false, retryBudget: false, backoff: { throttled: { strategy: "exponential", jitter: 0 } } }), client);
    // Blob: minDelayInMs 100 + baseDelayInMs 1000 x (2^n - 1): 1100, then 3100.
    expect(gaps(client.times)).toEqual([1100, 3100]);
  });

  it("rejects a bad backoff by name", () => {
    const pipeline = createEmptyPipeline();
    expect(() => installResilience(pipeline, { service: "table", backoff: null as never })).toThrow(/backoff must be an object .*got null/);
    expect(() => installResilience(pipeline, { service: "table", backoff: { transient: { strategy: "fixed", maxRetries: 9 } } })).toThrow(
      /backoff\.transient\.maxRetries \(9\) must not exceed retry\.maxRetries \(6\)/,
    );
  });
});
