import { describe, expect, it } from "vitest";
import { validateFaultRule, type FaultRule } from "../../../../src/testing/simulator/faultRule.js";

describe("validateFaultRule", () => {
  it("applies defaults", () => {
    expect(validateFaultRule({ kind: "serverBusy" })).toMatchObject({
      kind: "serverBusy",
      match: {},
      startInMs: 0,
      durationInMs: Infinity,
      count: Infinity,
      probability: 1,
      delayInMs: 0,
    });
  });

  it.each<[unknown, RegExp, ErrorConstructor]>([
    [{ kind: "explode" }, /rule\.kind must be one of .*"serverBusy".*; got "explode"/, TypeError],
    [{ kind: "serverBusy", probability: 1.5 }, /rule\.probability must be between 0 and 1; got 1\.5/, RangeError],
    [{ kind: "serverBusy", probability: "0.5" }, /rule\.probability must be a number; got "0\.5"/, TypeError],
    [{ kind: "serverBusy", count: 1.5 }, /rule\.count must be an integer; got 1\.5/, RangeError],
    [{ kind: "serverBusy", startInMs: -1 }, /rule\.startInMs must be between 0 and .*; got -1/, RangeError],
    [{ kind: "serverBusy", durationInMs: Number.NaN }, /rule\.durationInMs must be a number; got NaN/, TypeError],
    [{ kind: "slow", delayInMs: Infinity }, /rule\.delayInMs must be a finite number; got Infinity/, RangeError],
    [{ kind: "status" }, /rule\.status is required when rule\.kind is "status"/, TypeError],
    [{ kind: "status", status: 99 }, /rule\.status must be between 100 and 599; got 99/, RangeError],
    [{ kind: "status", status: 403, errorCode: "bad code" }, /rule\.errorCode must be an alphanumeric string; got "bad code"/, TypeError],
    [{ kind: "serverBusy", match: { partition: 5 } }, /rule\.match\.partition must be a string or a RegExp; got 5/, TypeError],
    [{ kind: "serverBusy", match: { service: "file" } }, /rule\.match\.service must be one of .*; got "file"/, TypeError],
    [{ kind: "serverBusy", match: { predicate: "x" } }, /rule\.match\.predicate must be a function; got "x"/, TypeError],
    [{ kind: "serverBusy", retryAfter: {} }, /rule\.retryAfter needs seconds or ms/, TypeError],
    [{ kind: "serverBusy", retryAfter: { seconds: 1, ms: 5 } }, /rule\.retryAfter takes seconds or ms, not both/, TypeError],
    [{ kind: "serverBusy", retryAfter: { ms: -5 } }, /rule\.retryAfter\.ms must be between 0 and .*; got -5/, RangeError],
    [{ kind: "serverBusy", retryAfter: { ms: 5, header: "Retry-After-Ms" } }, /rule\.retryAfter\.header must be one of/, TypeError],
    [{ kind: "serverBusy", name: 3 }, /rule\.name must be a string; got 3/, TypeError],
    [null, /rule must be an object; got null/, TypeError],
    [{ kind: "freeze" }, /rule\.durationInMs is required \(a finite number\) when rule\.kind is "freeze"; got undefined/, TypeError],
    [{ kind: "refuseConnections", durationInMs: Infinity }, /rule\.durationInMs is required .* when rule\.kind is "refuseConnections"; got Infinity/, TypeError],
    [{ kind: "refuseConnections", durationInMs: 5, match: { partition: "p" } }, /rule\.match does not apply to rule\.kind "refuseConnections"/, TypeError],
    [{ kind: "refuseConnections", durationInMs: 5, count: 1 }, /rule\.count does not apply to rule\.kind "refuseConnections".*; got 1\./, TypeError],
    [{ kind: "refuseConnections", durationInMs: 5, probability: 0.5 }, /rule\.probability does not apply to rule\.kind "refuseConnections".*; got 0\.5\./, TypeError],
  ])("rejects %j", (rule, message, type) => {
    expect(() => validateFaultRule(rule as FaultRule)).toThrow(type);
    expect(() => validateFaultRule(rule as FaultRule)).toThrow(message);
  });
});
