import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Registry } from "prom-client";
import { createMetricsObserver, fixedBackoff, resilientRetryPolicy, type LocalWaitEvent } from "../../../src/index.js";
import { SEND_NOW } from "../../../src/breaker/attemptGate.js";
import { ok, request, sampleValue, scripted, serverBusy } from "../metrics/metricsTestKit.js";
import { asGateOption, waitOf } from "../../support/scriptedGate.js";

// One wait event (onLocalWait) serves the metrics' local-wait gauge and the tracing observer:
// each wait without sending is told when it begins and when it is over, with its length.

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("onLocalWait", () => {
  it("tells each wait, a backoff and two circuit waits in a row, as its own started/ended pair with planned and actual length", async () => {
    const events: LocalWaitEvent[] = [];
    const registry = new Registry();
    // The first attempt goes; its retry waits twice for the probe of a partition that serves nothing (200 ms each) before it is sent.
    let admits = 0;
    const gate = { admit: () => (++admits === 2 || admits === 3 ? waitOf("circuit", 200) : SEND_NOW), record: () => undefined };
    const policy = resilientRetryPolicy({
      retry: fixedBackoff({ maxRetries: 3, delayInMs: 50 }),
      gate: asGateOption(gate),
      random: () => 0,
      observers: [createMetricsObserver("table", { registry }), { onLocalWait: (e) => void events.push(e) }],
    });
    const pending = policy.sendRequest(request(), scripted(serverBusy, ok));
    await vi.advanceTimersByTimeAsync(2000);
    expect((await pending).status).toBe(200);
    expect(events.map((e) => `${e.state} ${e.reason}`)).toEqual([
      "started backoff",
      "ended backoff",
      "started circuit",
      "ended circuit",
      "started circuit",
      "ended circuit",
    ]);
    const ended = events.filter((e) => e.state === "ended");
    expect(ended.map((e) => e.plannedInMs)).toEqual([50, 200, 200]);
    expect(ended.map((e) => e.ended)).toEqual(["waited", "waited", "waited"]);
    for (const e of ended) expect(e.waitedInMs).toBe(e.plannedInMs);
    expect(events.filter((e) => e.state === "started").every((e) => e.waitedInMs === undefined && e.ended === undefined)).toBe(true);
    expect(events[0]?.source).toBe("backoff");
    // The gauge reads the same events: back to 0 once the operation has gone.
    expect(await sampleValue(registry, "azure_storage_local_waits", { service: "table", reason: "circuit" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_local_waits", { service: "table", reason: "backoff" })).toBe(0);
  });
});
