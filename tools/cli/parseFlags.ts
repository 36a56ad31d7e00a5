import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usageError.js";

/** Option definitions as `node:util` parseArgs takes them. */
export type FlagDefinitions = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses `argv` strictly (unknown flags, missing values and stray arguments are errors)
 * and rethrows parseArgs' errors as {@link UsageError}s that name the flag.
 */
export function parseFlags(command: string, argv: readonly string[], options: FlagDefinitions): Record<string, string | boolean | undefined> {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
    if (positionals.length > 0) throw new UsageError(`${command}: unexpected argument ${JSON.stringify(positionals[0])}.`);
    return values as Record<string, string | boolean | undefined>;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw toUsageError(command, error, argv);
  }
}

function toUsageError(command: string, error: unknown, argv: readonly string[]): UsageError {
  const message = (error as Error)?.message ?? String(error);
  const code = (error as { code?: unknown })?.code;
  // parseArgs quotes the flag: "Unknown option '--foo'", "Option '--rate <value>' argument missing".
  const quoted = /'(-{1,2}[^'\s]+)/.exec(message)?.[1];
  const flag = quoted ?? argv.find((arg) => arg.startsWith("-"));
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return new UsageError(`${command}: unknown flag ${flag}.`, flag);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    if (/argument missing/.test(message)) return new UsageError(`${command}: ${flag} needs a value.`, flag);
    if (/ambiguous/.test(message)) return new UsageError(`${command}: ${flag} needs a value; for one starting with "-", write ${flag}=-...`, flag);
    return new UsageError(`${command}: ${flag} takes no value.`, flag);
  }
  return new UsageError(`${command}: ${message}`, flag);
}

/** Bounds of a numeric flag. */
export interface NumberFlagBounds {
  min: number;
  max: number;
  integer?: boolean;
  /** What the number counts, for the message: "seconds", "operations per second". */
  unit?: string;
}

/** Reads a numeric flag, or `fallback` when absent; a clear {@link UsageError} naming the flag otherwise. */
export function numberFlag(name: string, raw: string | boolean | undefined, fallback: number, bounds: NumberFlagBounds): number {
  if (raw === undefined) return fallback;
  const text = String(raw).trim();
  const value = text === "" ? NaN : Number(text);
  const kind = bounds.integer === true ? "an integer" : "a number";
  const unit = bounds.unit === undefined ? "" : ` of ${bounds.unit}`;
  if (!Number.isFinite(value) || value < bounds.min || value > bounds.max || (bounds.integer === true && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be ${kind}${unit} from ${bounds.min} to ${bounds.max}; got ${JSON.stringify(String(raw))}.`, `--${name}`);
  }
  return value;
}
