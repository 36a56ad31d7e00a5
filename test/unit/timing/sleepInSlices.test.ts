import { describe, expect, it } from "vitest";
import { sleepInSlices } from "../../../src/timing/sleepInSlices.js";

const ABORTED = new Error("aborted");

/** A sleep that records each slice asked for and rejects (the caller aborted) after `abortAfter` of them. */
function recordingSleep(abortAfter = Infinity) {
  const slices: number[] = [];
  const sleep = async (ms: number): Promise<void> => {
    slices.push(ms);
    if (slices.length > abortAfter) throw ABORTED;
  };
  return { slices, sleep };
}

describe("sleepInSlices", () => {
  it("without letGo, sleeps once for the whole delay", async () => {
    const { slices, sleep } = recordingSleep();
    expect(await sleepInSlices(600, sleep, undefined, 250)).toEqual({ ended: "waited" });
    expect(slices).toEqual([600]);
  });

  it("with letGo, sleeps in slices and asks between them only", async () => {
    const { slices, sleep } = recordingSleep();
    let asked = 0;
    expect(await sleepInSlices(600, sleep, () => (asked++, false), 250)).toEqual({ ended: "waited" });
    expect(slices).toEqual([250, 250, 100]);
    expect(asked).toBe(2);
  });

  it("ends early, released, once letGo says so", async () => {
    const { slices, sleep } = recordingSleep();
    expect(await sleepInSlices(1_000, sleep, () => slices.length === 2, 250)).toEqual({ ended: "released" });
    expect(slices).toEqual([250, 250]);
  });

  it("answers aborted when a slice's sleep was aborted", async () => {
    const { slices, sleep } = recordingSleep(1);
    expect(await sleepInSlices(1_000, sleep, () => false, 250)).toEqual({ ended: "aborted", error: ABORTED });
    expect(slices).toEqual([250, 250]);
  });

  it("ends the whole wait, woken, when a slice's sleep was woken", async () => {
    const slices: number[] = [];
    const sleep = async (ms: number): Promise<boolean> => (slices.push(ms), slices.length === 2);
    expect(await sleepInSlices(1_000, sleep, () => false, 250)).toEqual({ ended: "woken" });
    expect(slices).toEqual([250, 250]);
  });

  it("sleeps nothing for no delay", async () => {
    const { slices, sleep } = recordingSleep();
    expect(await sleepInSlices(0, sleep, () => true, 250)).toEqual({ ended: "waited" });
    expect(slices).toEqual([]);
  });
});
