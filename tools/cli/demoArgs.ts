import { DEFAULT_DEMO_OPTIONS, DEMO_LIMITS, type DemoOptions } from "../demo/demoOptions.js";
import { numberFlag, parseFlags } from "./parseFlags.js";
import { UsageError } from "./usageError.js";

/** What `demo`'s command line asks for. */
export type DemoCommand = { kind: "help" } | { kind: "run"; options: DemoOptions; json: boolean; jsonFile?: string };

const FLAGS = {
  duration: { type: "string" },
  rate: { type: "string" },
  partitions: { type: "string" },
  seed: { type: "string" },
  json: { type: "boolean" },
  "json-file": { type: "string" },
  "no-baseline": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Parses `demo`'s flags (after the command word). Pure; throws UsageError naming the bad flag. */
export function parseDemoArgs(argv: readonly string[]): DemoCommand {
  const values = parseFlags("demo", argv, FLAGS);
  if (values.help === true) return { kind: "help" };
  const d = DEFAULT_DEMO_OPTIONS;
  const jsonFile = values["json-file"];
  if (jsonFile !== undefined && (typeof jsonFile !== "string" || jsonFile.trim() === "")) {
    throw new UsageError("--json-file needs a file path.", "--json-file");
  }
  return {
    kind: "run",
    json: values.json === true,
    ...(jsonFile === undefined ? {} : { jsonFile }),
    options: {
      durationInSeconds: numberFlag("duration", values.duration, d.durationInSeconds, { ...DEMO_LIMITS.durationInSeconds, unit: "seconds" }),
      ratePerSecond: numberFlag("rate", values.rate, d.ratePerSecond, { ...DEMO_LIMITS.ratePerSecond, unit: "operations per second" }),
      partitions: numberFlag("partitions", values.partitions, d.partitions, { ...DEMO_LIMITS.partitions, integer: true }),
      seed: numberFlag("seed", values.seed, d.seed, { ...DEMO_LIMITS.seed, integer: true }),
      baseline: values["no-baseline"] !== true,
    },
  };
}
