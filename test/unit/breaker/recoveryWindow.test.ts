import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../../../src/address/requestAddress.js";
import type { SendAdmission } from "../../../src/breaker/attemptGate.js";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { RECOVERY_WINDOW_START, TURN_POLL_IN_MS } from "../../../src/breaker/recoveryWindow.js";
import type { OutcomeClass } from "../../../src/classification/outcomeClass.js";

const HOST = "https://acct.table.core.windows.net";
const address = (pk: string, account = HOST): RequestAddress =>
  readRequestAddress(createPipelineRequest({ url: `${account}/orders(PartitionKey='${pk}',RowKey='r')`, method: "GET" }));
const STATUS: Record<string, number> = { success: 200, throttled: 503 };
const answer = (outcomeClass: OutcomeClass) => ({ outcomeClass, status: STATUS[outcomeClass] });

/** Opens p-out's circuit (5 failures 100 ms apart), then lets its probe find it back: the account's window opens. */
function comeBack(breaker: PartitionBreaker): void {
  const out = address("p-out");
  for (let i = 0; i < 5; i++) {
    const admission = breaker.admit(out, Infinity);
    expect(admission.decision).toBe("send");
    breaker.record(out, admission as SendAdmission, answer("throttled"));
    vi.advanceTimersByTime(100);
  }
  expect(breaker.stateOf("table|acct|orders|p-out")).not.toBe("closed");
  vi.advanceTimersByTime(1_000);
  const probe = breaker.admit(out, Infinity) as SendAdmission;
  expect(probe.probe).toBe(true);
  breaker.record(out, probe, answer("success"));
  expect(breaker.stateOf("table|acct|orders|p-out")).toBe("closed");
}

/** Sends now, or a wait for a turn: a delay with a wake source. */
const sendsNow = (admission: ReturnType<PartitionBreaker["admit"]>): admission is SendAdmission => admission.decision === "send" && admission.delayInMs === 0;

describe("recovery window (an account back from an outage)", () => {
  let breaker: PartitionBreaker;
  beforeEach(() => {
    vi.useFakeTimers();
    breaker = createPartitionBreaker({ service: "table" });
  });
  afterEach(() => {
    breaker.dispose();
    vi.useRealTimers();
  });

  it("holds nothing back while no circuit of the account has closed", () => {
    const admissions = Array.from({ length: 100 }, (_, i) => breaker.admit(address(`p${i}`), Infinity));
    expect(admissions.every(sendsNow)).toBe(true);
  });

  it("after a circuit closes, lets RECOVERY_WINDOW_START attempts to the account be in flight, and the next one waits for a turn", () => {
    comeBack(breaker);
    const inFlight = Array.from({ length: RECOVERY_WINDOW_START }, (_, i) => breaker.admit(address(`p${i % 7}`), Infinity));
    expect(inFlight.every(sendsNow)).toBe(true);
    const waiting = breaker.admit(address("p-new"), 5_000);
    expect(waiting.decision).toBe("send");
    expect((waiting as SendAdmission).delayInMs).toBe(TURN_POLL_IN_MS);
    expect((waiting as SendAdmission).wake).toBeDefined();
    // Another account is not held back.
    expect(sendsNow(breaker.admit(address("p1", "https://other.table.core.windows.net"), Infinity))).toBe(true);
  });

  it("gives a freed slot to the newest waiter first, and confirms its wait when it asks again", () => {
    comeBack(breaker);
    const inFlight = Array.from({ length: RECOVERY_WINDOW_START }, (_, i) => ({ a: address(`p${i}`), admission: breaker.admit(address(`p${i}`), Infinity) as SendAdmission }));
    // One answer at once: the fastest is 0 ms, and the window grows by one; two more fill it.
    breaker.record(inFlight[0]!.a, inFlight[0]!.admission, answer("success"));
    expect([breaker.admit(address("f1"), Infinity), breaker.admit(address("f2"), Infinity)].every(sendsNow)).toBe(true);
    const older = breaker.admit(address("old"), Infinity) as SendAdmission;
    const newer = breaker.admit(address("new"), Infinity) as SendAdmission;
    const woken: string[] = [];
    older.wake?.listen(() => woken.push("older"));
    newer.wake?.listen(() => woken.push("newer"));
    expect(sendsNow(older) || sendsNow(newer)).toBe(false);
    // A slow answer (a queue: no growth): exactly one turn is handed out.
    vi.advanceTimersByTime(50);
    const first = inFlight[1]!;
    breaker.record(first.a, first.admission, answer("success"));
    expect(woken).toEqual(["newer"]);
    const confirmed = breaker.admit(address("new"), Infinity, newer);
    expect(sendsNow(confirmed)).toBe(true);
    // The older one, asked again at its poll with no slot free, waits on (the same ticket: the rest of its wait).
    const still = breaker.admit(address("old"), Infinity, older) as SendAdmission;
    expect(still.delayInMs).toBeGreaterThan(0);
    expect(still.ticket).toBe(older.ticket);
  });

  it("takes back the slot of an admission not sent (abandon), and is given up once idle", () => {
    comeBack(breaker);
    const sent = Array.from({ length: RECOVERY_WINDOW_START }, (_, i) => ({ a: address(`p${i}`), admission: breaker.admit(address(`p${i}`), Infinity) as SendAdmission }));
    expect(sendsNow(breaker.admit(address("x"), Infinity))).toBe(false);
    breaker.abandon(sent[0]!.a, sent[0]!.admission);
    expect(sendsNow(breaker.admit(address("y"), Infinity))).toBe(true);
    // All answered: the window is gone, and a burst goes out at once again.
    vi.advanceTimersByTime(20);
    for (const { a, admission } of sent.slice(1)) breaker.record(a, admission, answer("success"));
    // "y" and the turn handed to "x" are still out; nothing waits: free slots only.
    const burst = Array.from({ length: 4 * RECOVERY_WINDOW_START }, (_, i) => breaker.admit(address(`q${i}`), Infinity));
    expect(burst.filter(sendsNow).length).toBeGreaterThan(RECOVERY_WINDOW_START);
  });

  it("grows by one for each answer that found no queue", () => {
    comeBack(breaker);
    const sent = Array.from({ length: RECOVERY_WINDOW_START }, (_, i) => ({ a: address(`p${i}`), admission: breaker.admit(address(`p${i}`), Infinity) as SendAdmission }));
    // Every answer but the first's as fast as the fastest: each frees its slot and adds one more (the first stays out).
    for (const { a, admission } of sent.slice(1)) breaker.record(a, admission, answer("success"));
    const next = Array.from({ length: 2 * RECOVERY_WINDOW_START }, (_, i) => breaker.admit(address(`r${i}`), Infinity));
    expect(next.filter(sendsNow).length).toBe(2 * RECOVERY_WINDOW_START - 2);
  });

  it("orders turns by when each operation first met trouble, not by when it asked: the one that arrived last goes first", () => {
    // Two operations refused by p-out's open circuit, the first long before the second.
    const out = address("p-out");
    for (let i = 0; i < 5; i++) {
      breaker.record(out, breaker.admit(out, Infinity) as SendAdmission, answer("throttled"));
      vi.advanceTimersByTime(100);
    }
    const early = address("p-out");
    expect(breaker.stateOf("table|acct|orders|p-out")).toBe("open");
    expect(breaker.admit(early, Infinity)).toMatchObject({ decision: "refuse" });
    vi.advanceTimersByTime(150);
    const late = address("p-out");
    expect(breaker.admit(late, Infinity).decision).toBe("refuse");
    vi.advanceTimersByTime(1_000);
    breaker.record(out, breaker.admit(out, Infinity) as SendAdmission, answer("success"));
    // The window is open; fill it, then the late one asks for a turn before the early one does.
    const sent = Array.from({ length: RECOVERY_WINDOW_START }, (_, i) => ({ a: address(`p${i}`), admission: breaker.admit(address(`p${i}`), Infinity) as SendAdmission }));
    const lateWait = breaker.admit(late, Infinity) as SendAdmission;
    const earlyWait = breaker.admit(early, Infinity) as SendAdmission;
    const woken: string[] = [];
    lateWait.wake?.listen(() => woken.push("late"));
    earlyWait.wake?.listen(() => woken.push("early"));
    // The first answer (the fastest yet) also grows the window: two turns, the late one's first.
    vi.advanceTimersByTime(50);
    breaker.record(sent[0]!.a, sent[0]!.admission, answer("success"));
    expect(woken).toEqual(["late", "early"]);
  });
});
