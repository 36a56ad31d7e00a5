import { DEFAULT_STRESS_OPTIONS, STRESS_LIMITS, type StressOptions } from "../stress/stressOptions.js";
import { numberFlag, parseFlags } from "./parseFlags.js";
import { UsageError } from "./usageError.js";

/** What `stress`'s command line asks for. */
export type StressCommand = { kind: "help" } | { kind: "run"; options: StressOptions; json: boolean };

const FLAGS = {
  "connection-string": { type: "string" },
  table: { type: "string" },
  "partition-key": { type: "string" },
  entities: { type: "string" },
  "start-rate": { type: "string" },
  "max-rate": { type: "string" },
  steps: { type: "string" },
  "step-duration": { type: "string" },
  "throttle-at": { type: "string" },
  report: { type: "string" },
  cleanup: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Table names: letters and digits, starting with a letter, 3 to 63 characters. */
const TABLE_NAME = /^[A-Za-z][A-Za-z0-9]{2,62}$/;
/** Characters Tables forbids in keys: / \ # ? and control characters. */
const FORBIDDEN_KEY_CHARACTERS = /[/\\#?\p{Cc}]/u;

/**
 * Parses `stress`'s flags (after the command word); `env` supplies
 * `AZURE_STORAGE_CONNECTION_STRING` when the flag is absent. Pure; throws UsageError
 * naming the bad flag, never quoting a connection string.
 */
export function parseStressArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): StressCommand {
  const values = parseFlags("stress", argv, FLAGS);
  if (values.help === true) return { kind: "help" };
  const d = DEFAULT_STRESS_OPTIONS;
  const l = STRESS_LIMITS;
  const connectionString = stringFlag(values["connection-string"]) ?? nonEmpty(env.AZURE_STORAGE_CONNECTION_STRING);
  if (values["connection-string"] !== undefined && connectionString === undefined) {
    throw new UsageError("--connection-string must not be empty.", "--connection-string");
  }
  const table = stringFlag(values.table);
  if (table !== undefined && !TABLE_NAME.test(table)) {
    throw new UsageError(`--table must be 3 to 63 letters and digits, starting with a letter; got ${JSON.stringify(table)}.`, "--table");
  }
  const partitionKey = stringFlag(values["partition-key"]) ?? d.partitionKey;
  if (FORBIDDEN_KEY_CHARACTERS.test(partitionKey) || Buffer.byteLength(partitionKey) > 1024) {
    throw new UsageError("--partition-key must be at most 1 KiB without / \\ # ? or control characters.", "--partition-key");
  }
  const startRate = numberFlag("start-rate", values["start-rate"], d.startRate, { ...l.rate, unit: "entities per second" });
  const maxRate = numberFlag("max-rate", values["max-rate"], Math.max(d.maxRate, startRate), { ...l.rate, unit: "entities per second" });
  if (maxRate < startRate) throw new UsageError(`--max-rate (${maxRate}) must not be below --start-rate (${startRate}).`, "--max-rate");
  const throttleAt = numberFlag("throttle-at", values["throttle-at"], d.throttleAt, { ...l.throttleAt, unit: "entities per second" });
  if (values["throttle-at"] !== undefined && connectionString !== undefined) {
    throw new UsageError("--throttle-at applies to embedded Azurite only, not with a connection string.", "--throttle-at");
  }
  const report = stringFlag(values.report);
  if (values.report !== undefined && report === undefined) throw new UsageError("--report needs a file path.", "--report");
  return {
    kind: "run",
    json: values.json === true,
    options: {
      connectionString,
      table,
      partitionKey,
      entities: numberFlag("entities", values.entities, d.entities, { ...l.entities, integer: true }),
      startRate,
      maxRate,
      steps: numberFlag("steps", values.steps, d.steps, { ...l.steps, integer: true }),
      stepDurationInSeconds: numberFlag("step-duration", values["step-duration"], d.stepDurationInSeconds, { ...l.stepDurationInSeconds, unit: "seconds" }),
      throttleAt,
      reportPath: report,
      cleanup: values.cleanup === true,
    },
  };
}

function stringFlag(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" ? nonEmpty(value) : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
