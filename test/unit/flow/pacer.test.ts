import { describe, expect, it } from "vitest";
import { Pacer } from "../../../src/flow/pacer.js";

/**
 * decreaseFactor 0.5: 100 sends in the first second, a few of them served (too few to be a
 * capacity, not an outage), then a throttle, make a rate of 50/s (slots 20 ms apart), which
 * grows by slow start from the next success.
 */
const SETTINGS = { decreaseFactor: 0.5, minRatePerSecond: 1 };
const CUT_AT = 1000;

function pacedAt50PerSecond(): Pacer {
  const pacer = new Pacer(0, SETTINGS);
  for (let i = 0; i < 100; i++) pacer.reserve(i * 10, Infinity);
  for (let i = 0; i < 10; i++) pacer.rate.served(i * 100);
  expect(pacer.rate.throttled(CUT_AT, CUT_AT)).toBe(true);
  expect(pacer.rate.rateAt(CUT_AT)).toBeCloseTo(50, 9);
  return pacer;
}

describe("Pacer", () => {
  it("unpaced (no cut yet): every reservation is free now, and there is no queue", () => {
    const pacer = new Pacer(0, SETTINGS);
    const delays = Array.from({ length: 1000 }, () => pacer.reserve(5, 0));
    expect(new Set(delays)).toEqual(new Set([0]));
    expect(pacer.queueInMs(5)).toBe(0);
  });

  it("paced: slots reserved at one moment are 1000 / rate ms apart", () => {
    const pacer = pacedAt50PerSecond();
    const delays = Array.from({ length: 5 }, () => pacer.reserve(CUT_AT, Infinity));
    expect(delays.map((d) => (typeof d === "number" ? Math.round(d * 1000) / 1000 : d))).toEqual([0, 20, 40, 60, 80]);
    expect(pacer.queueInMs(CUT_AT)).toBeCloseTo(100, 6);
    expect(pacer.queueInMs(CUT_AT + 30)).toBeCloseTo(70, 6);
  });

  it("a caller arriving after the queue drained goes at once", () => {
    const pacer = pacedAt50PerSecond();
    pacer.reserve(CUT_AT, Infinity);
    pacer.reserve(CUT_AT, Infinity);
    expect(pacer.queueInMs(CUT_AT + 500)).toBe(0);
    expect(pacer.reserve(CUT_AT + 500, Infinity)).toBe(0);
  });

  it("a slot beyond remainingInMs is refused with the wait, and not reserved", () => {
    const pacer = pacedAt50PerSecond();
    for (let i = 0; i < 3; i++) pacer.reserve(CUT_AT, Infinity); // the next slot is 60 ms away
    const refused = pacer.reserve(CUT_AT, 59);
    expect(refused).toEqual({ refusedFor: expect.closeTo(60, 6) as number });
    expect(pacer.queueInMs(CUT_AT)).toBeCloseTo(60, 6);
    // The refused caller took no slot: the next one gets the same 60 ms.
    expect(pacer.reserve(CUT_AT, 60)).toBeCloseTo(60, 6);
    expect(pacer.queueInMs(CUT_AT)).toBeCloseTo(80, 6);
  });

  it("remainingInMs 0 still sends when the slot is free now", () => {
    const pacer = pacedAt50PerSecond();
    expect(pacer.reserve(CUT_AT, 0)).toBe(0);
    expect(pacer.reserve(CUT_AT, 0)).toEqual({ refusedFor: expect.closeTo(20, 6) as number });
  });

  it("a queue made at one rate is squeezed as the rate grows: every slot comes earlier, in order, and the tail with them", () => {
    const pacer = pacedAt50PerSecond();
    const slots = Array.from({ length: 100 }, () => {
      pacer.reserve(CUT_AT, Infinity);
      return pacer.lastSlot;
    });
    // The first slot is free now (no place kept); the last is 99 slots of 20 ms away.
    expect(slots[0]).toBeUndefined();
    const last = slots[99];
    if (last === undefined) throw new Error("the last slot has no place");
    expect(pacer.delayOf(last, CUT_AT)).toBeCloseTo(1980, 6);
    // Nothing has changed the rate: the slots stay where they were.
    expect(pacer.delayOf(last, CUT_AT + 100)).toBeCloseTo(1880, 6);
    // A success starts the slow start: 50/s doubles every 125 ms, so the queue left goes out far sooner.
    pacer.rate.served(CUT_AT + 100);
    const now = CUT_AT + 350; // two doublings: 200/s
    expect(pacer.rate.rateAt(now)).toBeCloseTo(200, 6);
    const delays = slots.slice(1).map((slot) => pacer.delayOf(slot as NonNullable<typeof slot>, now));
    expect(delays[98]).toBeCloseTo((1980 - 350) / 4, 6);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1] as number);
    // A newcomer queues behind the squeezed tail, not behind the old one.
    expect(pacer.queueInMs(now)).toBeCloseTo((2000 - 350) / 4, 6);
  });

  it("a slot of a queue that has since emptied has come, whatever its place on the old line", () => {
    const pacer = pacedAt50PerSecond();
    for (let i = 0; i < 100; i++) pacer.reserve(CUT_AT, Infinity);
    pacer.rate.served(CUT_AT + 100);
    // Squeezed (4x), then one more slot: its place is on the squeezed line, far from its time.
    expect(pacer.reserve(CUT_AT + 350, Infinity)).toBeCloseTo((2000 - 350) / 4, 6);
    const slot = pacer.lastSlot;
    if (slot === undefined) throw new Error("no place kept");
    expect(slot.position).toBeGreaterThan(CUT_AT + 1500); // read as a time on a new line, it would still be ahead
    // Long after the queue emptied, a reservation begins a new line; the old slot reads as come, not as its place.
    expect(pacer.reserve(CUT_AT + 1500, Infinity)).toBe(0);
    expect(pacer.delayOf(slot, CUT_AT + 1500)).toBe(0);
  });

  it("a queue spaced during an outage (nothing served) comes at once when the outage ends, and a newcomer goes at once", () => {
    const pacer = new Pacer(0, SETTINGS);
    for (let i = 0; i < 100; i++) pacer.reserve(i * 10, Infinity);
    expect(pacer.rate.throttled(CUT_AT, CUT_AT)).toBe(true);
    const slots = Array.from({ length: 50 }, () => (pacer.reserve(CUT_AT, Infinity), pacer.lastSlot));
    const last = slots[49];
    if (last === undefined) throw new Error("the last slot has no place");
    expect(pacer.delayOf(last, CUT_AT + 100)).toBeGreaterThan(800);
    expect(pacer.rate.served(CUT_AT + 100)).toBe(true); // the outage's end: let out
    for (const slot of slots.slice(1)) expect(pacer.delayOf(slot as NonNullable<typeof slot>, CUT_AT + 100)).toBe(0);
    expect(pacer.reserve(CUT_AT + 100, 0)).toBe(0);
  });
});
