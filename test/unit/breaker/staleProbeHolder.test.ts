// Review 2 (issue 23 fixes, c7f225d): a half-open circuit's probe taken with a paced slot is
// confirmed without asking the circuit again (partitionBreaker.ts admit: `probeOf(reserved)`
// returns the reserved admission at once). But a paced slot may lie further away than the
// circuit's reset period (the pacer grants any slot within the operation's remaining time), and
// the circuit treats a probe unreported for a reset period as lost (circuit.ts refuses()): it
// lets another attempt take a new probe. The first holder's confirmation is still honoured, so
// two probes go out, and the second holder sends even after the first probe failed and the
// circuit opened again.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { Circuit } from "../../../src/breaker/circuit.js";
import { entityAddressOf as addr, entityUrlOf as urlOf, SCOPE_P as P, openOwnCircuitThenThrottleAccount } from "../../support/throttleAccount.js";
import { resilientRetryPolicy } from "../../../src/index.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * The account throttled as a whole for a second (p's circuit opens, the account is paced at
 * about 112/s); its reset period passes; then an open loop's ~400 operations on healthy
 * partitions (first attempts) queue on the account, so that p's probe gets a slot ~3.5 s away.
 */
function halfOpenPBehindALongAccountQueue(): PartitionBreaker {
  const breaker = createPartitionBreaker({ service: "table" });
  openOwnCircuitThenThrottleAccount(breaker, addr("p"), ["a", "b", "c"].map(addr));
  expect(breaker.stateOf(P)).not.toBe("closed");
  vi.advanceTimersByTime(3_000);
  expect(breaker.stateOf(P)).toBe("half_open");
  // Until the next slot is over 3.5 s away: a paced wait is handed out in slices, so a caller with 3.5 s left is refused then.
  for (let i = 0; i < 5_000; i++) {
    if (breaker.admit(addr(`healthy${i % 50}`), 3_500).decision === "refuse") break;
  }
  return breaker;
}

describe("a paced probe whose slot is further than the reset period", () => {
  it("breaker: a probe is not given a slot behind the long account queue: it is refused for a half-open poll, and the probe stays free", () => {
    const breaker = halfOpenPBehindALongAccountQueue();
    expect(breaker.admit(addr("p"), 30_000)).toMatchObject({ decision: "refuse", reason: "circuit-open", retryAfterInMs: 300 });
    // Given back: the next ask (the account's queue shorter by then) may take it.
    expect(breaker.statusOf(P)).toMatchObject({ state: "half_open", available: true });
  });

  it("circuit: a confirmation holds its probe only while the circuit holds it (not once taken for lost, nor after it reported)", () => {
    const circuit = new Circuit(0, { resetTimeoutInMs: 3_000, consecutiveFailures: 1, halfOpenPollInMs: 300, probeLostAfterInMs: 3_000 });
    for (const t of [0, 300]) circuit.record("failed", t);
    expect(circuit.stateAt(3_300)).toBe("half_open");
    expect(circuit.admit(3_300)).toBe(true);
    expect(circuit.holdsProbe(3_300)).toBe(true);
    // Unreported for a reset period: taken for lost, another is let go.
    expect(circuit.admit(6_301)).toBe(true);
    expect(circuit.holdsProbe(3_300)).toBe(false);
    expect(circuit.holdsProbe(6_301)).toBe(true);
    circuit.record("failed", 6_400);
    expect(circuit.holdsProbe(6_301)).toBe(false);
  });

  it("retry loop (open loop): no attempt goes to a partition whose circuit is open (a probe's holder that outlived its probe does not send)", async () => {
    const breaker = halfOpenPBehindALongAccountQueue();
    let outOnP = 0;
    let mostOutOnP = 0;
    let sentWhileOpen = 0;
    // p answers after 2 s (a partition still being moved: slow, then 503).
    const slowBusy: SendRequest = (req: PipelineRequest) => {
      if (breaker.stateOf(P) === "open") sentWhileOpen += 1;
      outOnP += 1;
      mostOutOnP = Math.max(mostOutOnP, outOnP);
      return new Promise<PipelineResponse>((resolve) =>
        setTimeout(() => {
          outOnP -= 1;
          resolve({ request: req, status: 503, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) });
        }, 2_000),
      );
    };
    const policy = resilientRetryPolicy({ gate: breaker, retryBudget: false, maxElapsedInMs: 20_000 });
    const first = policy.sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), slowBusy).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(3_001);
    const second = policy.sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), slowBusy).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(3_000);
    // Probes go at a fixed rate whether or not the last has answered (a slow partition's return is seen at the next one).
    expect(mostOutOnP).toBe(2);
    expect(sentWhileOpen).toBe(0);
    await vi.advanceTimersByTimeAsync(30_000);
    await Promise.all([first, second]);
  });
});
