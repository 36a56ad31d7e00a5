import { numberOption, optionsObject, type OptionsShape } from "../validation/optionSchema.js";
import type { SendRateSettings } from "./sendRate.js";

/**
 * Options of per-partition pacing (docs/flow-control.md): a partition that answers
 * throttled (503 ServerBusy, 500 OperationTimedOut) gets its attempts spaced at a send
 * rate learnt from its answers. Every one is optional.
 */
export interface PacingOptions {
  /** On a throttled answer the rate drops to this fraction of the rate sent (CUBIC's β). Defaults to 0.7. */
  decreaseFactor?: number;
  /** The lowest rate a paced partition is held to, attempts/s. Defaults to 1. */
  minRatePerSecond?: number;
  /** A paced partition with no throttled answer for this long goes back to unpaced (and costs nothing). Defaults to 10000. */
  forgetAfterInMs?: number;
}

/** The defaults of {@link PacingOptions}, and why: docs/flow-control.md. */
export const DEFAULT_PACING_OPTIONS = Object.freeze({
  decreaseFactor: 0.7,
  minRatePerSecond: 1,
  forgetAfterInMs: 10_000,
});

/** {@link PacingOptions} validated, with defaults applied. */
export interface ResolvedPacingOptions extends SendRateSettings {
  forgetAfterInMs: number;
}

const d = DEFAULT_PACING_OPTIONS;
const checkPacingOptions = optionsObject(
  {
    decreaseFactor: numberOption({ min: 0.01, max: 0.99 }, d.decreaseFactor),
    minRatePerSecond: numberOption({ min: 0.01, max: 1_000_000 }, d.minRatePerSecond),
    forgetAfterInMs: numberOption({ min: 1, max: 86_400_000 }, d.forgetAfterInMs),
  } satisfies OptionsShape<PacingOptions>,
  { expected: "false or an options object" },
);

/** Validates `pacing` once: `false` turns pacing off; an object (or undefined) sets it up. */
export function resolvePacingOptions(option: unknown, name = "pacing"): ResolvedPacingOptions | undefined {
  return option === false ? undefined : checkPacingOptions(option === undefined ? {} : option, name);
}
