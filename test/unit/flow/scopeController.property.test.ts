// Properties of the one model, on a simulated clock: a scope's callers queue at a steady rate, the scope
// serves, then answers a fault for a while (throttles, failures, or nothing at all, with or without a trickle
// of other answers that are no success), then serves again. Whatever the draw:
// - the attempts into the fault stay within what finding it out costs, plus one probe per probe interval,
//   plus a few per trickle answer;
// - once it serves again, every attempt that waited has gone within a probe interval and a few round trips.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DEMAND_SHARE, QUIET_IN_MS, ScopeController, type ControllerSettings, type Evidence } from "../../../src/flow/scopeController.js";

const SETTINGS: ControllerSettings = { probeIntervalInMs: 300, unservedToOut: 5, pacing: true };

interface Draw {
  /** Between two callers arriving (ms). */
  gapInMs: number;
  roundTripInMs: number;
  fault: "throttled" | "failed" | "none";
  faultInMs: number;
  /** A non-success answer every this many ms during the fault (403, 501): 0 for none. */
  trickleEveryInMs: number;
}

const SERVING_BEFORE_IN_MS = 1_000;
const SERVING_AFTER_IN_MS = 3_000;

interface Outcome {
  intoFault: number;
  trickles: number;
  /** Callers waiting when the fault ended, and when the last of them was sent. */
  waitingAtEnd: number;
  lastOfThemSentAt: number;
  faultEndsAt: number;
}

/** Runs one draw, a millisecond at a time: callers queue, the scope's limit lets them go, the answers come back. */
function run(d: Draw): Outcome {
  const control = new ScopeController(0, SETTINGS);
  const faultStartsAt = SERVING_BEFORE_IN_MS;
  const faultEndsAt = faultStartsAt + d.faultInMs;
  const inFault = (at: number) => at >= faultStartsAt && at < faultEndsAt;
  /** Queued callers, by id; a caller whose attempt was unserved queues again at once. */
  const queue: number[] = [];
  /** When each queued caller joined the queue: one that waited a tick or more was held by the limit. */
  const queuedAt = new Map<number, number>();
  const inFlight = new Map<number, { sentAt: number; lost: boolean; waited: boolean }>();
  let next = 0;
  let intoFault = 0;
  let trickles = 0;
  /** Callers queued or caught in the fault when it ended, and when each was next sent. */
  let waitedAtEnd = new Set<number>();
  const sentAfterEnd = new Map<number, number>();
  const learn = (evidence: Evidence, sentAt: number, at: number, waited = false): void => {
    control.observe(evidence === "throttled" || evidence === "failed", "p", at);
    control.answer(evidence, sentAt, at, waited || queue.length > 1);
  };
  for (let at = 0; at < faultEndsAt + SERVING_AFTER_IN_MS; at++) {
    if (at === faultEndsAt) waitedAtEnd = new Set([...queue, ...[...inFlight].filter(([, a]) => inFault(a.sentAt)).map(([id]) => id)]);
    if (at % d.gapInMs === 0) {
      queuedAt.set(next, at);
      queue.push(next++);
      control.asked(at);
    }
    if (d.trickleEveryInMs > 0 && inFault(at) && (at - faultStartsAt) % d.trickleEveryInMs === 0) {
      trickles += 1;
      learn("answered", at - d.roundTripInMs, at);
    }
    for (const [id, attempt] of inFlight) {
      const answeredAt = d.fault === "none" && inFault(attempt.sentAt) ? faultEndsAt : attempt.sentAt + d.roundTripInMs;
      if (at >= answeredAt) {
        inFlight.delete(id);
        const unserved = inFault(attempt.sentAt);
        if (unserved) {
          queuedAt.set(id, at);
          queue.push(id);
        }
        if (!attempt.lost) learn(unserved ? (d.fault === "throttled" ? "throttled" : "failed") : "served", attempt.sentAt, at, attempt.waited);
      } else if (!attempt.lost && at - attempt.sentAt >= QUIET_IN_MS && at - control.servedAt >= QUIET_IN_MS) {
        // Unanswered, nothing served meanwhile: taken for lost (the breaker's rule).
        attempt.lost = true;
        learn("failed", attempt.sentAt, at, attempt.waited);
      }
    }
    const live = [...inFlight.values()].filter((attempt) => !attempt.lost).length;
    // Sends due within the tick go together, as the breaker's timer lets them.
    for (let sent = 0; queue.length > 0 && control.nextSendAt(at, live + sent) <= at + 1; sent++) {
      const id = queue.pop() as number;
      control.sent(at);
      inFlight.set(id, { sentAt: at, lost: false, waited: at > (queuedAt.get(id) as number) });
      if (waitedAtEnd.has(id) && !sentAfterEnd.has(id)) sentAfterEnd.set(id, at);
      if (inFault(at)) intoFault += 1;
    }
  }
  const neverSent = [...waitedAtEnd].filter((id) => !sentAfterEnd.has(id)).length;
  const lastOfThemSentAt = neverSent > 0 ? Infinity : Math.max(faultEndsAt, ...sentAfterEnd.values());
  return { intoFault, trickles, waitingAtEnd: waitedAtEnd.size, lastOfThemSentAt, faultEndsAt };
}

const draws = fc.record({
  gapInMs: fc.integer({ min: 1, max: 20 }),
  roundTripInMs: fc.integer({ min: 1, max: 10 }),
  fault: fc.constantFrom("throttled" as const, "failed" as const, "none" as const),
  faultInMs: fc.integer({ min: 500, max: 4_000 }),
  trickleEveryInMs: fc.constantFrom(0, 0, 100, 250, 500, 1_000),
});


describe("ScopeController, properties over random faults", () => {
  it("attempts into a fault: what finding it out costs, one probe per interval, a few per trickle answer", () => {
    fc.assert(
      fc.property(draws, (d) => {
        const o = run(d);
        const askedPerMs = 1 / d.gapInMs;
        // Finding out: the callers of a quarter second and a few round trips (throttles) or five in a row (failures).
        const findingOut = askedPerMs * (QUIET_IN_MS + 4 * d.roundTripInMs) + SETTINGS.unservedToOut;
        const probes = d.faultInMs / SETTINGS.probeIntervalInMs + 1;
        const bound = findingOut + probes + o.trickles * (SETTINGS.unservedToOut + 2) + 2;
        expect(o.intoFault).toBeLessThanOrEqual(bound);
      }),
      { numRuns: Number(process.env.RUNS ?? 150) },
    );
  });

  it("once it serves again, everyone who waited has gone within a probe interval and a few round trips per doubling", () => {
    fc.assert(
      fc.property(draws, (d) => {
        const o = run(d);
        // Out: the next probe, then one attempt per round trip, doubling. Paced (a trickle kept it from being out):
        // never below a quarter of what its callers ask, from which it doubles per round.
        const lowestRate = Math.max(1000 / SETTINGS.probeIntervalInMs, (DEMAND_SHARE * 1000) / d.gapInMs);
        const doublings = Math.log2(o.waitingAtEnd + 1) + 3;
        const bound = SETTINGS.probeIntervalInMs + (2 * 1000) / lowestRate + doublings * (2 * d.roundTripInMs + 2);
        expect(o.lastOfThemSentAt - o.faultEndsAt).toBeLessThanOrEqual(bound);
      }),
      { numRuns: Number(process.env.RUNS ?? 150) },
    );
  });
});
