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

describe("SendRate: made with a history (a partition's pacer, made at its second throttle)", () => {
  it.each<[string, { since: number; sent: number; served: number }, number | undefined]>([
    // [name, history, rate after the cut at the controller's making (undefined: no cut)]
    ["10 sent in the 1000 ms before, none served: cut at once to 0.7 x the 10/s sent (read over the last half second)", { since: -1000, sent: 10, served: 0 }, 7],
    ["10 sent in the 400 ms before: enough sends (25/s)", { since: -400, sent: 10, served: 0 }, 17.5],
    ["3 sent in the 400 ms before: too little to measure", { since: -400, sent: 3, served: 0 }, undefined],
    ["20 sent, 10 served in the 1000 ms before: at capacity, cut to the 10/s served", { since: -1000, sent: 20, served: 10 }, 10],
  ])("%s", (_name, history, after) => {
    const rate = new SendRate(0, DEFAULTS, history);
    expect(rate.throttled(-Infinity, 0)).toBe(after !== undefined);
    expect(rate.rateAt(0)).toBeCloseTo(after ?? Infinity, 6);
  });

  it("forgets the history after a bucket, like any count", () => {
    const rate = new SendRate(0, DEFAULTS, { since: -400, sent: 3, served: 0 });
    // At 1000 ms the history has left both buckets: nothing sent since, so nothing to measure.
    expect(rate.throttled(-Infinity, 1000)).toBe(false);
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

/** Calls `fn(at)` every 1000/perSecond ms over [from, to). */
function every(perSecond: number, from: number, to: number, fn: (at: number) => void): void {
  for (let at = from; at < to; at += 1000 / perSecond) fn(at);
}

/** `rate` sent and served an attempt every 1000/perSecond ms over [from, to): a scope serving all it is sent. */
function servedAll(rate: SendRate, perSecond: number, from: number, to: number): void {
  every(perSecond, from, to, (at) => {
    rate.sent(at);
    rate.served(at);
  });
}

describe("SendRate: a scope at capacity (it serves part of what it is sent)", () => {
  const cutAt = 1000;
  /** 100 sends/s for a second, 50 of them served: a hot partition at twice its capacity. */
  function hotAt50(): SendRate {
    const rate = new SendRate(0, DEFAULTS);
    every(100, 0, 1000, (at) => rate.sent(at));
    every(50, 0, 1000, (at) => rate.served(at));
    expect(rate.throttled(cutAt, cutAt)).toBe(true);
    return rate;
  }

  it("the cut goes to the rate it served (50/s), not to 0.7 x the rate sent (70/s): that is its capacity, the plateau", () => {
    const rate = hotAt50();
    expect(rate.plateau).toBeCloseTo(50, 6);
    expect(rate.rateAt(cutAt)).toBeCloseTo(50, 6);
  });

  it("never below the rate it has just served: successes at 90/s after the cut hold it at 90/s at once", () => {
    const rate = hotAt50();
    servedAll(rate, 90, cutAt, cutAt + 1000);
    expect(rate.rateAt(cutAt + 1000)).toBeGreaterThanOrEqual(89);
    // With successes at only 30/s the floor is the plateau's curve, not the served rate.
    const slow = hotAt50();
    every(100, cutAt, cutAt + 1000, (at) => slow.sent(at));
    every(30, cutAt, cutAt + 1000, (at) => slow.served(at));
    expect(slow.rateAt(cutAt + 1000)).toBeCloseTo(50 * 1.01, 6);
  });

  it("probes past the plateau along the convex curve only (+1 % at 1 s, +8 % at 2 s, +27 % at 3 s, 2.25x at 5 s), with no doubling on a quiet spell", () => {
    const rate = hotAt50();
    // No throttle after the cut, and sends far above the curve: a paced queue looks like this, whatever the partition can take.
    const expected: Array<[number, number]> = [[1000, 50.5], [2000, 54], [2250, 50 * (1 + 0.01 * 2.25 ** 3)], [3000, 63.5], [5000, 112.5]];
    let from = cutAt;
    for (const [afterCut, value] of expected) {
      // Enough demand that the 2x-sent clamp stays out of the way.
      every(400, from, cutAt + afterCut, (at) => rate.sent(at));
      from = cutAt + afterCut;
      expect(rate.rateAt(from)).toBeCloseTo(value, 6);
    }
  });

  it("past the plateau, at most twice the rate sent lately; idle, it stays at the plateau", () => {
    const idle = hotAt50();
    expect(idle.rateAt(cutAt + 5000)).toBeCloseTo(50, 6);
    const light = hotAt50();
    every(30, cutAt + 4000, cutAt + 5000, (at) => light.sent(at)); // 30/s: twice is 60/s, the curve alone far more
    const rate = light.rateAt(cutAt + 5000);
    expect(rate).toBeGreaterThan(55);
    expect(rate).toBeLessThan(65);
  });

  it("backlogged (its pacer has a queue) but sending too few for the meter, it probes along the curve instead of staying at the plateau", () => {
    const rate = hotAt50();
    // Nothing measured since the cut: a queue let out at a few per second reads like this.
    expect(rate.rateAt(cutAt + 5000)).toBeCloseTo(50, 6);
    expect(rate.rateAt(cutAt + 5000, cutAt + 5000, true)).toBeCloseTo(112.5, 6);
    // Measured, the 2x-sent clamp holds, backlogged or not.
    const light = hotAt50();
    every(30, cutAt + 4000, cutAt + 5000, (at) => light.sent(at));
    expect(light.rateAt(cutAt + 5000, cutAt + 5000, true)).toBeLessThan(65);
  });
});

describe("SendRate: an outage (a cut while the scope served nothing) teaches nothing", () => {
  const cutAt = 1000;
  /** 100 sends/s for a second, none served (an outage, or an account throttled as a whole): a cut to 0.7 x 100. */
  function out(): SendRate {
    const rate = sentEvenly(100, 1000);
    expect(rate.throttled(cutAt, cutAt)).toBe(true);
    expect(rate.plateau).toBe(Infinity); // nothing learnt about its capacity
    return rate;
  }

  it("a burst of throttles with no time to see a success (a pacer made at a hot partition's second throttle, 5 ms after its first) is no outage", () => {
    const rate = new SendRate(1000, DEFAULTS, { since: 995, sent: 10, served: 0 });
    expect(rate.throttled(1000, 1000)).toBe(true);
    expect(rate.served(1010)).toBe(false); // slow start, not let go
    expect(rate.paced).toBe(true);
  });

  it("holds the cut rate while the outage lasts", () => {
    const rate = out();
    for (const at of [cutAt, cutAt + 500, cutAt + 3000]) expect(rate.rateAt(at)).toBeCloseTo(70, 6);
  });

  it("the first success after it lets the scope go at once: unpaced, and says so", () => {
    const rate = out();
    const firstSuccess = cutAt + 2000;
    expect(rate.served(firstSuccess)).toBe(true);
    expect(rate.paced).toBe(false);
    expect(rate.rateAt(firstSuccess)).toBe(Infinity);
    expect(rate.served(firstSuccess + 5)).toBe(false); // only the first ends it
  });

  it("a throttled answer to an attempt sent into the outage cuts nothing after it; one sent after it cuts from what was sent", () => {
    const rate = out();
    rate.served(3000);
    every(100, 2500, 3500, (at) => rate.sent(at));
    expect(rate.throttled(2999, 3500)).toBe(false);
    expect(rate.paced).toBe(false);
    expect(rate.throttled(3100, 3500)).toBe(true);
    expect(rate.rateAt(3500)).toBeCloseTo(70, 0); // 0.7 x the ~100/s sent: no success in the window but the one at 3000, rolled out
  });

  it("with a capacity learnt before, it goes back to that plateau at once, then probes past it along the curve", () => {
    const rate = new SendRate(0, DEFAULTS);
    every(100, 0, 1000, (at) => rate.sent(at));
    every(50, 0, 1000, (at) => rate.served(at));
    rate.throttled(1000, 1000); // plateau 50
    // Then two seconds sending 20/s, none served: an outage cut.
    every(20, 1000, 3000, (at) => rate.sent(at));
    expect(rate.throttled(2999, 3000)).toBe(true);
    expect(rate.plateau).toBeCloseTo(50, 6);
    // 0.7 x the 20/s sent is 14/s, but one cut keeps half of the 50/s allowed: a window partly idle reads low.
    expect(rate.rateAt(3000)).toBeCloseTo(25, 6);
    expect(rate.served(4000)).toBe(true);
    expect(rate.paced).toBe(true);
    expect(rate.rateAt(4000)).toBeCloseTo(50, 6);
    expect(rate.rateAt(4000, 5000)).toBeCloseTo(50, 6); // a later slot gets no probe past the plateau
  });
});

describe("SendRate: slow start after a scope served a little (below the capacity share)", () => {
  const cutAt = 1000;
  /** 100 sends/s for a second, 5 of them served: too few to be a capacity, not an outage. */
  function little(): SendRate {
    const rate = sentEvenly(100, 1000);
    every(5, 500, 1000, (at) => rate.served(at));
    expect(rate.throttled(cutAt, cutAt)).toBe(true);
    expect(rate.plateau).toBe(Infinity);
    return rate;
  }

  it("from the first success, doubles every 125 ms: back past 10x within half a second, with no plateau to stop at", () => {
    const rate = little();
    const firstSuccess = cutAt + 2000;
    expect(rate.served(firstSuccess)).toBe(false);
    expect(rate.rateAt(firstSuccess)).toBeCloseTo(70, 6);
    expect(rate.rateAt(firstSuccess + 125)).toBeCloseTo(140, 6);
    expect(rate.rateAt(firstSuccess + 500)).toBeCloseTo(70 * 16, 6);
    // A pacer asks for a later slot's rate: the same curve.
    expect(rate.rateAt(firstSuccess, firstSuccess + 250)).toBeCloseTo(280, 6);
  });

  it("with a capacity learnt before, doubles only to 0.7 x that plateau, then climbs along CUBIC's curve to it", () => {
    const rate = new SendRate(0, DEFAULTS);
    every(100, 0, 1000, (at) => rate.sent(at));
    every(50, 0, 1000, (at) => rate.served(at));
    rate.throttled(1000, 1000); // plateau 50
    // Then two seconds sending 20/s, one of them served in the last second: below the capacity share, not an outage.
    every(20, 1000, 3000, (at) => rate.sent(at));
    rate.served(2600);
    expect(rate.throttled(2999, 3000)).toBe(true);
    expect(rate.plateau).toBeCloseTo(50, 6);
    // 0.7 x the 20/s sent is 14/s, but one cut keeps half of the 50/s allowed: a window partly idle reads low.
    expect(rate.rateAt(3000)).toBeCloseTo(25, 6);
    expect(rate.served(4000)).toBe(false);
    expect(rate.rateAt(4000, 4030)).toBeCloseTo(25 * 2 ** (30 / 125), 6);
    const handOver = 4000 + 125 * Math.log2(35 / 25); // where the doubling reaches 0.7 x 50
    expect(rate.rateAt(4000, handOver + 1)).toBeCloseTo(35, 0);
    expect(rate.rateAt(4000, handOver + kOf(50) * 1000)).toBeCloseTo(50, 6);
    expect(rate.rateAt(4000, handOver + (kOf(50) * 1000) / 2)).toBeCloseTo(50 - 15 / 8, 6);
  });

  it("a throttle in slow start cuts from what was sent, not from the projected rate", () => {
    const rate = little();
    rate.served(1100);
    every(60, 1100, 2000, (at) => rate.sent(at));
    expect(rate.rateAt(2000)).toBeGreaterThan(10_000); // the projection after 900 ms of doubling
    expect(rate.throttled(1500, 2000)).toBe(true);
    // No success in the window (the answer at 1100 rolled out): 0.7 x the ~60-70/s sent.
    expect(rate.rateAt(2000)).toBeGreaterThan(35);
    expect(rate.rateAt(2000)).toBeLessThan(60);
  });
});


describe("SendRate: a caller making one call at a time through a partition busy for a second", () => {
  it("a cut with no success for half a second is an outage: nothing learnt, and the first success lets the scope go", () => {
    // 100 calls/s served, then the partition answers busy: an answer at 1100 ms, the retry at 1850 ms answered busy too.
    const rate = new SendRate(0, DEFAULTS);
    servedAll(rate, 100, 0, 1100);
    rate.sent(1100);
    rate.sent(1850);
    expect(rate.throttled(1850, 1850)).toBe(true);
    // The meter's window still holds the successes from 1000-1100 ms: without the rule this read as a capacity.
    expect(rate.plateau).toBe(Infinity);
    expect(rate.served(2900)).toBe(true);
    expect(rate.paced).toBe(false);
    expect(rate.rateAt(2900)).toBe(Infinity);
  });

  it("made at the second throttle with nothing served since the first, its history says so (no success since `since`)", () => {
    const rate = new SendRate(1750, DEFAULTS, { since: 1000, sent: 2, served: 0 });
    rate.sent(1750);
    expect(rate.throttled(1750, 1750)).toBe(true);
    expect(rate.served(2900)).toBe(true);
    expect(rate.paced).toBe(false);
  });
});

describe("SendRate: an outage whose first answer read as a capacity", () => {
  it("undoes the plateau that first answer taught, so the first success lets the scope go unpaced", () => {
    const rate = new SendRate(0, DEFAULTS);
    servedAll(rate, 100, 0, 1000);
    // The partition turns busy at 1000 ms: its first throttle comes right after successes (a capacity, as read then).
    rate.sent(1000);
    expect(rate.throttled(1000, 1000)).toBe(true);
    expect(rate.plateau).toBeLessThan(Infinity);
    // The retry, 700 ms later, is busy too, with nothing served in between: an outage, and the 1000 ms cut was its first answer.
    rate.sent(1700);
    expect(rate.throttled(1700, 1700)).toBe(true);
    expect(rate.plateau).toBe(Infinity);
    expect(rate.served(2500)).toBe(true);
    expect(rate.paced).toBe(false);
  });

  it("keeps a plateau learnt with successes after it", () => {
    const rate = new SendRate(0, DEFAULTS);
    every(100, 0, 1000, (at) => rate.sent(at));
    every(50, 0, 1000, (at) => rate.served(at));
    expect(rate.throttled(1000, 1000)).toBe(true);
    const plateau = rate.plateau;
    every(50, 1000, 1200, (at) => rate.served(at));
    // An outage after it had served again: what the earlier cut taught stands.
    rate.sent(2000);
    expect(rate.throttled(2000, 2000)).toBe(true);
    expect(rate.plateau).toBe(plateau);
  });
});
