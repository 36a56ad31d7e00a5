import { describe, expect, it } from "vitest";
import { Circuit, QUIET_IN_MS, type CircuitConfig } from "../../../src/breaker/circuit.js";
import type { CircuitState } from "../../../src/breaker/circuitStateSource.js";

const RESET_IN_MS = 3_000;
const POLL_IN_MS = 300;
const config = (consecutiveFailures = 5): CircuitConfig => ({ resetTimeoutInMs: RESET_IN_MS, consecutiveFailures, halfOpenPollInMs: POLL_IN_MS, probeLostAfterInMs: RESET_IN_MS });

/** One outcome at a time (ms): `S` served, `F` a rebalancing failure, `-` aborted (no evidence). */
type Step = [at: number, evidence: "S" | "F" | "-"];
const EVIDENCE = { S: "served", F: "failed", "-": "none" } as const;

/** Plays `steps` on a circuit made at the first step's time; returns its state after each. */
function play(steps: Step[], consecutiveFailures = 5): CircuitState[] {
  const circuit = new Circuit(steps[0]?.[0] ?? 0, config(consecutiveFailures));
  return steps.map(([at, evidence]) => {
    circuit.record(EVIDENCE[evidence], at);
    return circuit.stateAt(at);
  });
}

/** `count` steps of `evidence`, `everyInMs` apart from `from`. */
function run(evidence: Step[1], count: number, everyInMs: number, from = 0): Step[] {
  return Array.from({ length: count }, (_, i): Step => [from + i * everyInMs, evidence]);
}

/** A circuit opened at `at` (5 failures 100 ms apart, the last at `at`). */
function openedAt(at: number): Circuit {
  const circuit = new Circuit(at - 400, config());
  for (const [t] of run("F", 5, 100, at - 400)) circuit.record("failed", t);
  expect(circuit.stateAt(at)).toBe("open");
  expect(circuit.retryAfterInMs(at)).toBe(RESET_IN_MS);
  return circuit;
}

/**
 * A script of calls, one per word: `F400` records a failure at 400 ms, `S` a served answer,
 * `N` an abort (no evidence), `A` asks admit, `R` gives the probe back. The circuit is made at 0.
 */
type Script = string;

interface Played {
  /** Each change `record` returned, as `from>to@at`. */
  changes: string[];
  /** Each admit's answer, as `at:yes` / `at:no`. */
  admits: string[];
  /** The state read at the last call's time. */
  final: CircuitState;
}

/** Plays `script`; with `queries`, asks every query twice before each call, at its time. */
function perform(script: Script, queries = false): Played {
  const circuit = new Circuit(0, config());
  const played: Played = { changes: [], admits: [], final: "closed" };
  let at = 0;
  for (const word of script.split(" ")) {
    const call = word[0];
    at = Number(word.slice(1));
    const ask = (): unknown[] => [circuit.stateAt(at), circuit.refuses(at), circuit.retryAfterInMs(at)];
    if (queries) expect(ask()).toEqual(ask());
    if (call === "A") played.admits.push(`${at}:${circuit.admit(at) ? "yes" : "no"}`);
    else if (call === "R") circuit.returnProbe(at);
    else {
      const change = circuit.record(call === "S" ? "served" : call === "F" ? "failed" : "none", at);
      if (change !== undefined) played.changes.push(`${change.from}>${change.to}@${at}`);
    }
  }
  played.final = circuit.stateAt(at);
  return played;
}

/** Five failures 100 ms apart: the circuit opens at 400 and its probe is due at 3400. */
const OPEN = "F0 F100 F200 F300 F400";

const TRANSITIONS: [name: string, script: Script, changes: string[], admits: string[], final: CircuitState][] = [
  ["closed → open: the 5th failure 250 ms after the last success", OPEN, ["closed>open@400"], [], "open"],
  ["closed, served: no change", "F0 S100 A150", [], ["150:yes"], "closed"],
  ["closed, aborted: no change", "F0 N100", [], [], "closed"],
  ["open refuses before its reset timeout", `${OPEN} A3399`, ["closed>open@400"], ["3399:no"], "open"],
  ["open → half-open by time: admit returns no change, the probe goes", `${OPEN} A3400`, ["closed>open@400"], ["3400:yes"], "half_open"],
  ["half-open lets one probe: the next is refused", `${OPEN} A3400 A3401`, ["closed>open@400"], ["3400:yes", "3401:no"], "half_open"],
  ["half-open → closed: the probe is served", `${OPEN} A3400 S3450 A3460`, ["closed>open@400", "half_open>closed@3450"], ["3400:yes", "3460:yes"], "closed"],
  ["half-open → open: the probe failed", `${OPEN} A3400 F3450 A6449`, ["closed>open@400", "half_open>open@3450"], ["3400:yes", "6449:no"], "open"],
  ["half-open → open: the probe aborted", `${OPEN} A3400 N3450 A6450`, ["closed>open@400", "half_open>open@3450"], ["3400:yes", "6450:yes"], "half_open"],
  ["open → closed: a late success from an attempt sent before it opened", `${OPEN} S500`, ["closed>open@400", "open>closed@500"], [], "closed"],
  ["open, failures: no change, the probe time does not move", `${OPEN} F1000 A3400`, ["closed>open@400"], ["3400:yes"], "half_open"],
  ["half-open by time, no probe out: a failure changes nothing", `${OPEN} F3500 A3600`, ["closed>open@400"], ["3600:yes"], "half_open"],
  ["half-open by time, no probe out: a success closes it", `${OPEN} S3500`, ["closed>open@400", "half_open>closed@3500"], [], "closed"],
  ["a probe given back lets another go at once", `${OPEN} A3400 R3400 A3410 A3420`, ["closed>open@400"], ["3400:yes", "3410:yes", "3420:no"], "half_open"],
  ["giving back when closed changes nothing", "F0 R100 A100", [], ["100:yes"], "closed"],
  ["a probe unreported for a reset period is given up: another may go", `${OPEN} A3400 A6399 A6400 A6401`, ["closed>open@400"], ["3400:yes", "6399:no", "6400:yes", "6401:no"], "half_open"],
  ["a served probe starts a fresh count: 4 failures do not reopen it", `${OPEN} A3400 S3450 F3500 F3600 F3700 F3800`, ["closed>open@400", "half_open>closed@3450"], ["3400:yes"], "closed"],
  ["... the 5th does", `${OPEN} A3400 S3450 F3500 F3600 F3700 F3800 F3900`, ["closed>open@400", "half_open>closed@3450", "closed>open@3900"], ["3400:yes"], "open"],
];

describe("Circuit: transitions", () => {
  it.each(TRANSITIONS)("%s", (_name, script, changes, admits, final) => {
    expect(perform(script)).toEqual({ changes, admits, final });
  });

  it.each(TRANSITIONS)("queries change nothing: %s", (_name, script) => {
    expect(perform(script, true)).toEqual(perform(script));
  });

  it("reads half-open once the reset period passes, without being asked to admit", () => {
    const circuit = openedAt(400);
    expect(circuit.stateAt(3_399)).toBe("open");
    expect(circuit.stateAt(3_400)).toBe("half_open");
    expect(circuit.refuses(3_400)).toBe(false);
    // Read at an earlier time again: nothing was written.
    expect(circuit.stateAt(3_399)).toBe("open");
    expect(circuit.refuses(3_399)).toBe(true);
  });
});

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

describe("Circuit: retryAfterInMs", () => {
  it("counts down to the probe while open", () => {
    const circuit = openedAt(10_000);
    expect(circuit.admit(10_000)).toBe(false);
    expect(circuit.retryAfterInMs(10_000)).toBe(3_000);
    expect(circuit.admit(12_999)).toBe(false);
    expect(circuit.retryAfterInMs(12_999)).toBe(1);
    // Past the probe time (an open circuit nobody asked about): nothing to wait for.
    expect(circuit.retryAfterInMs(20_000)).toBe(0);
  });

  it("is the short poll while a probe is out, and 0 once it is given back", () => {
    const circuit = openedAt(0);
    expect(circuit.admit(3_000)).toBe(true);
    expect(circuit.retryAfterInMs(3_010)).toBe(POLL_IN_MS);
    circuit.returnProbe(3_020);
    expect(circuit.retryAfterInMs(3_020)).toBe(0);
  });

  it("a failed probe reopens it for another full reset period", () => {
    const circuit = openedAt(0);
    circuit.admit(3_000);
    circuit.record("failed", 3_200);
    expect(circuit.retryAfterInMs(3_200)).toBe(RESET_IN_MS);
  });

  it("is 0 on a closed circuit", () => {
    expect(new Circuit(0, config()).retryAfterInMs(0)).toBe(0);
  });
});

describe("Circuit: a reset period given by the failure that opens it", () => {
  it("opens for the resetInMs the opening failure passes, and a failed probe for the one its failure passes", () => {
    const circuit = new Circuit(0, config());
    for (const [t] of run("F", 4, 100)) circuit.record("failed", t);
    circuit.record("failed", 400, { resetInMs: 500 });
    expect(circuit.stateAt(899)).toBe("open");
    expect(circuit.retryAfterInMs(400)).toBe(500);
    expect(circuit.stateAt(900)).toBe("half_open");
    expect(circuit.admit(900)).toBe(true);
    circuit.record("failed", 950);
    // No resetInMs this time: the configured period.
    expect(circuit.retryAfterInMs(950)).toBe(RESET_IN_MS);
  });
});

describe("Circuit: close", () => {
  it("closes an open circuit from outside and returns the change; a closed one has none", () => {
    const circuit = openedAt(0);
    expect(circuit.close(100)).toEqual({ from: "open", to: "closed" });
    expect(circuit.admit(100)).toBe(true);
    expect(circuit.close(200)).toBeUndefined();
    // Its failures start over: four more do not open it.
    for (const [t] of run("F", 4, 100, 1_000)) circuit.record("failed", t);
    expect(circuit.stateAt(1_300)).toBe("closed");
  });
});
