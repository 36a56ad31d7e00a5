import { describe, expect, it } from "vitest";
import { SendRate, type SendRateSettings } from "../../../src/flow/sendRate.js";

const DEFAULTS: SendRateSettings = { decreaseFactor: 0.7, minRatePerSecond: 1 };

/** A rate made at 0 that sent `count` attempts evenly over [0, overInMs). */
function sentEvenly(count: number, overInMs: number, settings = DEFAULTS): SendRate {
  const rate = new SendRate(0, settings);
  for (let i = 0; i < count; i++) rate.sent((i * overInMs) / count);
  return rate;
}

/** CUBIC's K: seconds from a cut to the plateau `w`. */
const kOf = (w: number, beta = 0.7) => Math.cbrt((w * (1 - beta)) / 0.4);

describe("SendRate: before the first cut", () => {
  it("is unpaced: rateAt is Infinity, whatever was sent", () => {
    const rate = sentEvenly(1000, 1000);
    expect(rate.paced).toBe(false);
    expect(rate.cutAt).toBe(-Infinity);
    expect(rate.rateAt(0)).toBe(Infinity);
    expect(rate.rateAt(1_000_000)).toBe(Infinity);
  });

  it.each<[string, number, number, number, boolean]>([
    // [name, sends, over ms, throttled at, cuts]
    ["7 sends in 300 ms, throttle at 400 ms: too little to measure", 7, 300, 400, false],
    ["no send, throttle at once (the scope's first throttle)", 0, 0, 0, false],
    ["8 sends in 100 ms: enough sends", 8, 100, 100, true],
    ["2 sends, throttle at 500 ms: long enough", 2, 400, 500, true],
  ])("%s", (_name, sends, overInMs, at, cuts) => {
    const rate = sentEvenly(sends, overInMs);
    expect(rate.throttled(at, at)).toBe(cuts);
    expect(rate.paced).toBe(cuts);
    expect(rate.rateAt(at) === Infinity).toBe(!cuts);
  });
});

describe("SendRate: the cut", () => {
  it.each<[string, number, number, SendRateSettings, number]>([
    // [name, sends, in ms, settings, rate right after the cut]
    ["100 sends in 1 s -> 0.7 x 100/s", 100, 1000, DEFAULTS, 70],
    ["400 sends in 1 s -> 0.7 x 400/s", 400, 1000, DEFAULTS, 280],
    ["100 sends in 1 s, decreaseFactor 0.5 -> 50/s", 100, 1000, { decreaseFactor: 0.5, minRatePerSecond: 1 }, 50],
    ["8 sends in 100 ms (80/s) -> 56/s", 8, 100, DEFAULTS, 56],
  ])("%s", (_name, sends, inMs, settings, expected) => {
    const rate = sentEvenly(sends, inMs, settings);
    expect(rate.throttled(inMs, inMs)).toBe(true);
    expect(rate.cutAt).toBe(inMs);
    expect(rate.rateAt(inMs)).toBeCloseTo(expected, 6);
  });

  it("a throttle for an attempt sent before the last cut does not cut again; one sent after it does", () => {
    const rate = sentEvenly(100, 1000);
    rate.throttled(1000, 1000);
    for (const sentAt of [0, 500, 999]) expect(rate.throttled(sentAt, 1010)).toBe(false);
    expect(rate.cutAt).toBe(1000);
    expect(rate.rateAt(1000)).toBeCloseTo(70, 6);
    // Sent at the cut's rate (70/s) after it: the next round's throttle cuts from what was sent.
    for (let i = 0; i < 35; i++) rate.sent(1000 + i * (1000 / 70));
    expect(rate.throttled(1200, 1500)).toBe(true);
    expect(rate.cutAt).toBe(1500);
    expect(rate.rateAt(1500)).toBeLessThan(70);
  });

  it("a later cut never raises the plateau above the allowed rate, whatever the meter says", () => {
    const rate = sentEvenly(100, 1000);
    rate.throttled(1000, 1000);
    const allowed = rate.rateAt(1600);
    // A burst of sends the pacer did not space (admitted before the cut) reads as more than the ~75/s allowed.
    for (let i = 0; i < 150; i++) rate.sent(1500 + i * 0.5);
    rate.throttled(1550, 1600);
    expect(rate.rateAt(1600)).toBeCloseTo(0.7 * allowed, 6);
  });

  it("cuts at most once per half second", () => {
    const rate = sentEvenly(100, 1000);
    expect(rate.throttled(1000, 1000)).toBe(true);
    expect(rate.throttled(1200, 1200)).toBe(false);
    expect(rate.throttled(1400, 1499)).toBe(false);
    for (let i = 0; i < 40; i++) rate.sent(1400 + i * 2.5);
    expect(rate.throttled(1450, 1500)).toBe(true);
  });

  it("never below minRatePerSecond, and no cut on an answer when nothing was sent lately", () => {
    const settings = { decreaseFactor: 0.7, minRatePerSecond: 5 };
    const rate = new SendRate(0, settings);
    rate.sent(0);
    expect(rate.throttled(0, 600)).toBe(true); // 1 send in 600 ms: 1.7/s measured
    expect(rate.rateAt(600)).toBe(5);
    expect(rate.throttled(2_000, 2_500)).toBe(false); // nothing sent for two seconds: no rate to cut from
    for (const at of [700, 800, 1000, 1500, 2_500]) expect(rate.rateAt(at)).toBeGreaterThanOrEqual(5);
  });
});

describe("SendRate: the cubic regrowth", () => {
  const cutAt = 1000;
  function cutFrom100(): SendRate {
    const rate = sentEvenly(100, 1000);
    rate.throttled(cutAt, cutAt);
    return rate;
  }

  it("reaches the plateau (the measured rate) at K = cbrt(W (1 - beta) / 0.4) s, and exceeds it after, while used", () => {
    const rate = cutFrom100();
    const kInMs = kOf(100) * 1000;
    // Sends go on at 100/s: past the plateau the rate may run to twice that, so the curve is not clamped here.
    for (let at = cutAt; at <= cutAt + kInMs + 5000; at += 10) rate.sent(at);
    expect(kInMs).toBeCloseTo(4217, 0);
    expect(rate.rateAt(cutAt + kInMs)).toBeCloseTo(100, 6);
    expect(rate.rateAt(cutAt + kInMs / 2)).toBeCloseTo(100 - 30 / 8, 6); // 0.4 (K/2)^3 = W (1 - beta) / 8
    expect(rate.rateAt(cutAt + kInMs + 1000)).toBeCloseTo(100.4, 6);
    expect(rate.rateAt(cutAt + kInMs + 5000)).toBeCloseTo(150, 6);
  });

  it("past the plateau, runs at most twice ahead of the rate sent lately; idle, it stays at the plateau", () => {
    const idle = cutFrom100();
    const kInMs = kOf(100) * 1000;
    expect(idle.rateAt(cutAt + kInMs + 5000)).toBeCloseTo(100, 6); // nothing sent since the cut
    const light = cutFrom100();
    for (let at = cutAt + kInMs; at <= cutAt + kInMs + 5000; at += 1000 / 60) light.sent(at); // 60/s
    const rate = light.rateAt(cutAt + kInMs + 5000);
    expect(rate).toBeGreaterThan(100); // probing past the plateau...
    expect(rate).toBeLessThan(125); // ...only as far as twice what is sent, give or take the meter (the curve alone: 150)
    // Before the plateau the clamp never applies: the regrowth after a cut is the curve's.
    expect(idle.rateAt(cutAt + kInMs / 2)).toBeCloseTo(100 - 30 / 8, 6);
  });

  it("grows without falling back: fast at first, flat near the plateau", () => {
    const rate = cutFrom100();
    const samples = Array.from({ length: 100 }, (_, i) => rate.rateAt(cutAt + i * 100));
    for (let i = 1; i < samples.length; i++) expect(samples[i]).toBeGreaterThanOrEqual(samples[i - 1]!);
    const firstSecond = rate.rateAt(cutAt + 1000) - rate.rateAt(cutAt);
    const aroundK = rate.rateAt(cutAt + kOf(100) * 1000 + 500) - rate.rateAt(cutAt + kOf(100) * 1000 - 500);
    expect(firstSecond).toBeGreaterThan(10 * aroundK);
  });
});
