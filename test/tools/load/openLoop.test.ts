import { describe, expect, it } from "vitest";
import { runOpenLoop } from "../../../tools/load/openLoop.js";

describe("runOpenLoop", () => {
  it("fires each item at its time without waiting for earlier ones to finish", async () => {
    const started = performance.now();
    const firedAt: number[] = [];
    let finished = 0;
    const fired = await runOpenLoop(
      [{ atInMs: 0 }, { atInMs: 30 }, { atInMs: 60 }],
      async () => {
        firedAt.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 200)); // slower than the spacing
        finished++;
      },
    );
    expect(fired).toHaveLength(3);
    expect(finished).toBe(0); // all three were fired before the first finished
    expect(firedAt[2]).toBeGreaterThanOrEqual(55);
    expect(firedAt[2]).toBeLessThan(190);
    await Promise.all(fired);
    expect(finished).toBe(3);
  });

  it("stops firing when the signal aborts", async () => {
    const controller = new AbortController();
    let count = 0;
    setTimeout(() => controller.abort(), 40);
    const fired = await runOpenLoop(
      [{ atInMs: 0 }, { atInMs: 10 }, { atInMs: 5_000 }],
      async () => {
        count++;
      },
      { signal: controller.signal },
    );
    expect(fired).toHaveLength(2);
    expect(count).toBe(2);
  });
});
