import { describe, expect, it } from "vitest";
import { Circuit, QUIET_IN_MS } from "../../../src/breaker/circuit.js";
import type { CircuitState } from "../../../src/breaker/circuitStateSource.js";

const RESET_IN_MS = 3_000;
const POLL_IN_MS = 300;

/** One outcome at a time (ms): `S` served, `F` a rebalancing failure, `-` aborted (no evidence). */
type Step = [at: number, evidence: "S" | "F" | "-"];
const EVIDENCE = { S: "served", F: "failed", "-": "none" } as const;

/** Plays `steps` on a circuit made at the first step's time; returns its state after each. */
function play(steps: Step[], consecutiveFailures = 5): CircuitState[] {
  const circuit = new Circuit(steps[0]?.[0] ?? 0);
  return steps.map(([at, evidence]) => circuit.record(EVIDENCE[evidence], at, consecutiveFailures));
}

/** `count` steps of `evidence`, `everyInMs` apart from `from`. */
function run(evidence: Step[1], count: number, everyInMs: number, from = 0): Step[] {
  return Array.from({ length: count }, (_, i): Step => [from + i * everyInMs, evidence]);
}

/** A circuit opened at `at` (5 failures 100 ms apart, the last at `at`). */
function openedAt(at: number): Circuit {
  const circuit = new Circuit(at - 400);
  for (const [t] of run("F", 5, 100, at - 400)) circuit.record("failed", t, 5);
  expect(circuit.state).toBe("open");
  expect(circuit.openedAt).toBe(at);
  return circuit;
}

describe("Circuit: when it opens", () => {
  it("waits a quarter second without a success", () => {
    expect(QUIET_IN_MS).toBe(250);
  });

  it.each<[string, Step[], number, CircuitState]>([
    ["5 failures 100 ms apart: opens on the 5th", run("F", 5, 100), 5, "open"],
    ["4 failures 100 ms apart: not yet", run("F", 4, 100), 5, "closed"],
    ["5 failures within 250 ms of the first: the partition may still be serving", run("F", 5, 10), 5, "closed"],
    ["5 failures within 250 ms of a success (a hot partition's burst)", [[0, "S"], ...run("F", 5, 40, 10)], 5, "closed"],
    ["... and a 6th once the partition has served nothing for 250 ms", [[0, "S"], ...run("F", 5, 40, 10), [250, "F"]], 5, "open"],
    ["a success resets the run: 4 + 4 failures", [...run("F", 4, 300), [1000, "S"], ...run("F", 4, 300, 1100)], 5, "closed"],
    ["... the 5th after the success opens it", [...run("F", 4, 300), [1000, "S"], ...run("F", 5, 300, 1100)], 5, "open"],
    ["a 404-like answer (served) resets it too", [...run("F", 4, 300), [1200, "S"], [1500, "F"]], 5, "closed"],
    ["aborted attempts neither count nor reset", [...run("F", 3, 100), [250, "-"], [260, "-"], ...run("F", 2, 100, 300)], 5, "open"],
    ["consecutiveFailures 1: the first failure 250 ms after creation opens it", [[0, "F"], [250, "F"]], 1, "open"],
    ["consecutiveFailures Infinity: never", run("F", 1000, 100), Infinity, "closed"],
  ])("%s", (_name, steps, consecutiveFailures, expected) => {
    expect(play(steps, consecutiveFailures).at(-1)).toBe(expected);
  });

  it.each<[string, Step[]]>([
    ["alternating success and failure every 20 ms for 20 s", Array.from({ length: 1000 }, (_, i): Step => [i * 20, i % 2 ? "S" : "F"])],
    ["four failures to one success, 10 ms apart, for 20 s", Array.from({ length: 2000 }, (_, i): Step => [i * 10, i % 5 === 4 ? "S" : "F"])],
    ["twenty failures to one success, 10 ms apart (a success every 210 ms)", Array.from({ length: 2100 }, (_, i): Step => [i * 10, i % 21 === 20 ? "S" : "F"])],
  ])("a hot partition never opens it: %s", (_name, steps) => {
    const states = play(steps);
    expect(states.length).toBeGreaterThan(500);
    expect(new Set(states)).toEqual(new Set(["closed"]));
  });
});

describe("Circuit: open and half-open", () => {
  it("refuses while open, with retryAfterInMs counting down to the probe", () => {
    const circuit = openedAt(10_000);
    expect(circuit.admits(10_000, RESET_IN_MS)).toBe(false);
    expect(circuit.retryAfterInMs(10_000, RESET_IN_MS, POLL_IN_MS)).toBe(3_000);
    expect(circuit.admits(12_999, RESET_IN_MS)).toBe(false);
    expect(circuit.retryAfterInMs(12_999, RESET_IN_MS, POLL_IN_MS)).toBe(1);
    expect(circuit.state).toBe("open");
    // Late (an open circuit nobody asked about): never negative.
    expect(circuit.retryAfterInMs(20_000, RESET_IN_MS, POLL_IN_MS)).toBe(0);
  });

  it("half-open admits exactly one probe; the others are told to poll", () => {
    const circuit = openedAt(0);
    expect(circuit.admits(3_000, RESET_IN_MS)).toBe(true);
    expect(circuit.state).toBe("half_open");
    expect(circuit.probeOut).toBe(true);
    const others = Array.from({ length: 10 }, (_, i) => circuit.admits(3_001 + i, RESET_IN_MS));
    expect(others).toEqual(Array.from({ length: 10 }, () => false));
    expect(circuit.retryAfterInMs(3_010, RESET_IN_MS, POLL_IN_MS)).toBe(POLL_IN_MS);
  });

  it("a served probe closes it, with a fresh count", () => {
    const circuit = openedAt(0);
    circuit.admits(3_000, RESET_IN_MS);
    expect(circuit.record("served", 3_050, 5)).toBe("closed");
    expect(circuit.probeOut).toBe(false);
    expect(circuit.admits(3_060, RESET_IN_MS)).toBe(true);
    // The run starts again: 4 failures 100 ms apart do not reopen it.
    const states = run("F", 4, 100, 3_100).map(([at]) => circuit.record("failed", at, 5));
    expect(states.at(-1)).toBe("closed");
  });

  it.each<["failed" | "none"]>([["failed"], ["none"]])("a %s probe reopens it for another full reset period", (evidence) => {
    const circuit = openedAt(0);
    circuit.admits(3_000, RESET_IN_MS);
    expect(circuit.record(evidence, 3_200, 5)).toBe("open");
    expect(circuit.openedAt).toBe(3_200);
    expect(circuit.probeOut).toBe(false);
    expect(circuit.admits(3_200, RESET_IN_MS)).toBe(false);
    expect(circuit.retryAfterInMs(3_200, RESET_IN_MS, POLL_IN_MS)).toBe(RESET_IN_MS);
    expect(circuit.admits(6_199, RESET_IN_MS)).toBe(false);
    expect(circuit.admits(6_200, RESET_IN_MS)).toBe(true);
  });

  it("a probe never reported back is given up after a reset period: another may go", () => {
    const circuit = openedAt(0);
    expect(circuit.admits(3_000, RESET_IN_MS)).toBe(true);
    expect(circuit.admits(5_999, RESET_IN_MS)).toBe(false);
    expect(circuit.admits(6_000, RESET_IN_MS)).toBe(true);
    expect(circuit.admits(6_001, RESET_IN_MS)).toBe(false);
    expect(circuit.record("served", 6_100, 5)).toBe("closed");
  });

  it("a late success from an attempt sent before it opened closes it: the partition answers", () => {
    const circuit = openedAt(0);
    expect(circuit.record("served", 100, 5)).toBe("closed");
  });

  it("failures while open keep it open and do not move the probe", () => {
    const circuit = openedAt(0);
    circuit.record("failed", 1_000, 5);
    expect(circuit.state).toBe("open");
    expect(circuit.openedAt).toBe(0);
  });
});
