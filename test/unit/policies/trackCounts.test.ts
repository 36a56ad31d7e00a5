// Review 2 (handle.work / CallerPolicy.track): a unit's slot is given back however the unit ends,
// a synchronous throw included. Passing tests: evidence that these counts do not drift.
import { describe, expect, it } from "vitest";
import { CallerPolicy } from "../../../src/policies/callerPolicy.js";

describe("CallerPolicy.track gives the slot back", () => {
  it("after units that throw synchronously, reject, or return a plain value", async () => {
    // N = 2, reserve 1: a wait may start while at most 1 slot is busy.
    const caller = new CallerPolicy({ kind: "bounded", concurrency: 2 });
    await expect(caller.track(() => { throw new Error("sync"); })).rejects.toThrow("sync");
    await expect(caller.track(() => Promise.reject(new Error("async")))).rejects.toThrow("async");
    await expect(caller.track((() => 7) as unknown as () => Promise<number>)).resolves.toBe(7);
    // Were any of the three still counted, two busy slots would exceed N - R = 1.
    caller.started();
    expect(caller.mayStartWait("circuit")).toBe(true);
    caller.ended();
  });

  it("while a unit runs, it is a busy slot whether or not it is inside the client", async () => {
    const caller = new CallerPolicy({ kind: "bounded", concurrency: 2 });
    let finish: () => void = () => undefined;
    const running = caller.track(() => new Promise<void>((resolve) => (finish = resolve)));
    const other = caller.track(async () => {
      caller.started();
      try {
        return caller.mayStartWait("circuit");
      } finally {
        caller.ended();
      }
    });
    expect(await other).toBe(false);
    finish();
    await running;
    expect(caller.mayStartWait("circuit")).toBe(true);
  });
});
