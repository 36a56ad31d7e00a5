import { describe, expect, it } from "vitest";
import { parseStressArgs } from "../../../tools/cli/stressArgs.js";
import { isUsageError, type UsageError } from "../../../tools/cli/usageError.js";
import { DEFAULT_STRESS_OPTIONS } from "../../../tools/stress/stressOptions.js";

const SECRET = "AccountKey=c2VjcmV0LWtleS1kby1ub3QtcHJpbnQ=";
const CONNECTION_STRING = `DefaultEndpointsProtocol=https;AccountName=acct;${SECRET};EndpointSuffix=core.windows.net`;

function usageError(argv: string[], env: Record<string, string> = {}): UsageError {
  try {
    parseStressArgs(argv, env);
  } catch (error) {
    if (isUsageError(error)) return error;
    throw error;
  }
  throw new Error(`no error for ${argv.join(" ")}`);
}

describe("parseStressArgs", () => {
  it("defaults to embedded Azurite", () => {
    const command = parseStressArgs([]);
    expect(command).toMatchObject({ kind: "run", json: false, options: { ...DEFAULT_STRESS_OPTIONS, connectionString: undefined, table: undefined, reportPath: undefined } });
  });

  it("takes the connection string from the flag, else from AZURE_STORAGE_CONNECTION_STRING", () => {
    expect(parseStressArgs(["--connection-string", CONNECTION_STRING])).toMatchObject({ options: { connectionString: CONNECTION_STRING } });
    expect(parseStressArgs([], { AZURE_STORAGE_CONNECTION_STRING: CONNECTION_STRING })).toMatchObject({ options: { connectionString: CONNECTION_STRING } });
    expect(parseStressArgs([], { AZURE_STORAGE_CONNECTION_STRING: "  " })).toMatchObject({ options: { connectionString: undefined } });
  });

  it("reads the ramp, the table, the report and cleanup", () => {
    const command = parseStressArgs([
      "--table", "Orders2026", "--partition-key", "2026-11", "--entities", "20", "--start-rate", "10", "--max-rate", "40",
      "--steps", "2", "--step-duration", "1.5", "--throttle-at", "30", "--report", "out/r.html", "--cleanup", "--json",
    ]);
    expect(command).toEqual({
      kind: "run",
      json: true,
      options: {
        connectionString: undefined, table: "Orders2026", partitionKey: "2026-11", entities: 20, startRate: 10, maxRate: 40,
        steps: 2, stepDurationInSeconds: 1.5, throttleAt: 30, reportPath: "out/r.html", cleanup: true,
      },
    });
  });

  it("a start rate above the default maximum raises the maximum with it", () => {
    expect(parseStressArgs(["--start-rate", "5000"])).toMatchObject({ options: { startRate: 5000, maxRate: 5000 } });
  });

  it.each([
    [["--table", "1abc"], "--table"],
    [["--table", "ab"], "--table"],
    [["--partition-key", "a/b"], "--partition-key"],
    [["--entities", "5"], "--entities"],
    [["--steps", "0"], "--steps"],
    [["--step-duration", "soon"], "--step-duration"],
    [["--start-rate", "50", "--max-rate", "10"], "--max-rate"],
    [["--throttle-at", "-1"], "--throttle-at"],
    [["--report", ""], "--report"],
    [["--connection-string", ""], "--connection-string"],
    [["--verbose"], "--verbose"],
  ])("%j is refused, naming %s", (argv, flag) => {
    expect(usageError(argv).flag).toBe(flag);
  });

  it("--throttle-at is for embedded Azurite only", () => {
    expect(usageError(["--throttle-at", "10", "--connection-string", CONNECTION_STRING]).flag).toBe("--throttle-at");
  });

  it("never quotes a connection string in its errors", () => {
    const error = usageError(["--connection-string", CONNECTION_STRING, "--throttle-at", "5"]);
    expect(error.message).not.toContain(SECRET);
    expect(usageError(["--bogus", CONNECTION_STRING]).message).not.toContain(SECRET);
  });
});
