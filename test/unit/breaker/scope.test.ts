import { describe, expect, it } from "vitest";
import { Attempt, Scope } from "../../../src/breaker/scope.js";
import { QUIET_IN_MS, type ControllerSettings } from "../../../src/flow/scopeController.js";

const SETTINGS: ControllerSettings = { probeIntervalInMs: 300, unservedToOut: 5, pacing: true };

describe("Scope.lostAt", () => {
  it("is Infinity with nothing in flight; a quarter second after the oldest attempt when nothing was served since", () => {
    const scope = new Scope("p", "table", "acct", 0, SETTINGS);
    expect(scope.lostAt()).toBe(Infinity);
    const attempt = new Attempt(100, { from: "p", partition: scope, account: undefined }, [scope], false);
    scope.live.add(attempt);
    expect(scope.lostAt()).toBe(100 + QUIET_IN_MS);
  });

  it("moves with what the scope serves: an attempt that hangs in a serving scope is not lost, and no timer falls due in the past", () => {
    const scope = new Scope("p", "table", "acct", 0, SETTINGS);
    const hung = new Attempt(100, { from: "p", partition: scope, account: undefined }, [scope], false);
    scope.live.add(hung);
    scope.control.answer("served", 390, 400, false);
    expect(scope.lostAt()).toBe(400 + Math.max(QUIET_IN_MS, 4 * scope.control.smoothedInMs));
  });
});
