import type { AttemptOutcome, classify as classifyOutcome } from "./classify.js";
import { OUTCOME_CLASSES, type OutcomeClass } from "./outcomeClass.js";
import { describeValue } from "../validation/describeValue.js";
import { optionsObject, type OptionCheck, type OptionsShape } from "../validation/optionSchema.js";

/**
 * How users extend or override the built-in classification table.
 * Precedence: `classify` predicate, then the explicit lists, then the built-in table.
 */
export interface ClassificationRules {
  /** Extra HTTP status codes to treat as `transient` (retried). */
  retriableStatusCodes?: readonly number[];
  /** Extra `x-ms-error-code` values or error `code`s to treat as `transient` (retried). */
  retriableErrorCodes?: readonly string[];
  /** HTTP status codes never to retry (`permanent`), even if the built-in table would. */
  nonRetriableStatusCodes?: readonly number[];
  /** `x-ms-error-code` values or error `code`s never to retry (`permanent`). */
  nonRetriableErrorCodes?: readonly string[];
  /**
   * Last word on an outcome: return a class to override, or undefined to keep
   * `defaultClass`. A caller's abort stays `aborted` whatever this returns.
   */
  classify?: (outcome: Parameters<typeof classifyOutcome>[0], defaultClass: OutcomeClass) => OutcomeClass | undefined;
}

const statusCodes: OptionCheck<readonly number[] | undefined> = (list, path) => {
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new TypeError(`${path} must be an array of status codes.`);
  for (const status of list) {
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new RangeError(`${path} must hold HTTP status codes (100-599); got ${String(status)}.`);
    }
  }
  return list;
};

const errorCodes: OptionCheck<readonly string[] | undefined> = (list, path) => {
  if (list !== undefined && (!Array.isArray(list) || list.some((code) => typeof code !== "string" || code === ""))) {
    throw new TypeError(`${path} must be an array of non-empty strings.`);
  }
  return list;
};

/** Validates user rules once, up front; throws a TypeError/RangeError naming the bad option. */
export const validateClassificationRules: OptionCheck<ClassificationRules> = optionsObject({
  retriableStatusCodes: statusCodes,
  retriableErrorCodes: errorCodes,
  nonRetriableStatusCodes: statusCodes,
  nonRetriableErrorCodes: errorCodes,
  classify: (classify, path) => {
    if (classify !== undefined && typeof classify !== "function") throw new TypeError(`${path} must be a function.`);
    return classify as ClassificationRules["classify"];
  },
} satisfies OptionsShape<ClassificationRules>);

/** Applies user rules to the built-in answer. */
export function applyClassificationRules(
  outcome: AttemptOutcome,
  builtIn: OutcomeClass,
  errorCode: string | undefined,
  rules: ClassificationRules,
): OutcomeClass {
  let result = builtIn;
  if (builtIn !== "aborted" && builtIn !== "success") {
    if (outcome.status !== undefined && rules.retriableStatusCodes?.includes(outcome.status)) result = "transient";
    if (errorCode !== undefined && rules.retriableErrorCodes?.includes(errorCode)) result = "transient";
    if (outcome.status !== undefined && rules.nonRetriableStatusCodes?.includes(outcome.status)) result = "permanent";
    if (errorCode !== undefined && rules.nonRetriableErrorCodes?.includes(errorCode)) result = "permanent";
  } else if (builtIn === "success" && outcome.status !== undefined && rules.retriableStatusCodes?.includes(outcome.status)) {
    result = "transient";
  }
  if (rules.classify && builtIn !== "aborted") {
    const override = rules.classify(outcome, result);
    if (override !== undefined) {
      if (!OUTCOME_CLASSES.includes(override)) {
        throw new TypeError(`classification.classify returned ${describeValue(override)}, which is not an outcome class.`);
      }
      result = override;
    }
  }
  return result;
}
