import { describe, expect, it } from "vitest";
import { Pacer } from "../../../src/flow/pacer.js";

/** decreaseFactor 0.5: 100 sends in the first second, then a throttle, make a rate of 50/s (slots 20 ms apart). */
const SETTINGS = { decreaseFactor: 0.5, minRatePerSecond: 1 };
const CUT_AT = 1000;

function pacedAt50PerSecond(): Pacer {
  const pacer = new Pacer(0, SETTINGS);
  for (let i = 0; i < 100; i++) pacer.reserve(i * 10, Infinity);
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
});
