import { describe, expect, it } from "vitest";
import { parseDemoArgs } from "../../../tools/cli/demoArgs.js";
import { isUsageError, type UsageError } from "../../../tools/cli/usageError.js";
import { DEFAULT_DEMO_OPTIONS } from "../../../tools/demo/demoOptions.js";

function usageError(argv: string[]): UsageError {
  try {
    parseDemoArgs(argv);
  } catch (error) {
    if (isUsageError(error)) return error;
    throw error;
  }
  throw new Error(`no error for ${argv.join(" ")}`);
}

describe("parseDemoArgs", () => {
  it("applies the defaults", () => {
    expect(parseDemoArgs([])).toEqual({ kind: "run", json: false, options: { ...DEFAULT_DEMO_OPTIONS } });
  });

  it("reads every flag", () => {
    const command = parseDemoArgs(["--duration", "4.5", "--rate=80", "--partitions", "6", "--seed", "42", "--json", "--no-baseline"]);
    expect(command).toEqual({
      kind: "run",
      json: true,
      options: { durationInSeconds: 4.5, ratePerSecond: 80, partitions: 6, seed: 42, baseline: false },
    });
  });

  it("--json-file names a file for the JSON summary, beside or instead of --json", () => {
    expect(parseDemoArgs(["--json-file", "out/summary.json"])).toMatchObject({ kind: "run", json: false, jsonFile: "out/summary.json" });
    expect(parseDemoArgs(["--json", "--json-file=s.json"])).toMatchObject({ json: true, jsonFile: "s.json" });
    expect(parseDemoArgs([])).not.toHaveProperty("jsonFile");
  });

  it.each([["--help"], ["-h"], ["--duration", "5", "--help"]])("%s asks for help", (...argv) => {
    expect(parseDemoArgs(argv)).toEqual({ kind: "help" });
  });

  it.each([
    [["--duration", "abc"], "--duration", /--duration must be a number of seconds from 1 to 3600; got "abc"/],
    [["--duration", "0"], "--duration", /got "0"/],
    [["--duration", ""], "--duration", /--duration/],
    [["--rate", "-5"], "--rate", /--rate needs a value; for one starting with "-", write --rate=-/],
    [["--rate=-5"], "--rate", /--rate must be a number of operations per second from 1 to 2000; got "-5"/],
    [["--rate", "Infinity"], "--rate", /--rate/],
    [["--partitions", "2.5"], "--partitions", /--partitions must be an integer from 1 to 26/],
    [["--partitions", "27"], "--partitions", /--partitions/],
    [["--seed", "1e20"], "--seed", /--seed must be an integer/],
    [["--bogus"], "--bogus", /unknown flag --bogus/],
    [["--rate"], "--rate", /--rate needs a value/],
    [["--json=yes"], "--json", /--json takes no value/],
    [["--json-file"], "--json-file", /--json-file needs a value/],
    [["--json-file="], "--json-file", /--json-file needs a file path/],
  ])("%j is refused, naming %s", (argv, flag, message) => {
    const error = usageError(argv);
    expect(error.flag).toBe(flag);
    expect(error.message).toMatch(message);
  });

  it("refuses stray arguments", () => {
    expect(usageError(["now"]).message).toMatch(/unexpected argument "now"/);
  });
});
