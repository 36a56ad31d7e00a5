/**
 * Where these names used to live, kept so that modules not yet moved to
 * `src/ambiguousWrites/` (the retry loop, retryInfo, retryEvents, safetyMetrics) still
 * build. Import from `../ambiguousWrites/<name>.js`; remove this file once nothing imports it.
 */
export { AMBIGUOUS_WRITE_RESULTS, type AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
export { isAppliedAnswer } from "../ambiguousWrites/isAppliedAnswer.js";
export { isUnknownOutcome } from "../ambiguousWrites/isUnknownOutcome.js";
export { isWriteMethod } from "../ambiguousWrites/isWriteMethod.js";
export { bodyText } from "../ambiguousWrites/requestBodyText.js";
export { describeTableWrite, type TableWrite } from "../ambiguousWrites/tableWrite.js";
