import { errorCodeOf } from "../classification/networkErrors.js";
import type { AttemptResult } from "../classification/attemptResult.js";

/**
 * Network errors raised before a connection carried the request: the store cannot have
 * seen it. Every other network error or timeout may have struck after the request was sent.
 */
const NOT_SENT_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * True when an attempt's outcome is unknown: the request may have been applied although
 * no success came back. A reset, a socket error or a timeout after the request could have
 * left (our per-attempt timeout included); an answer that could not be read (a body cut
 * mid-way, the SDK's `PARSE_ERROR`, Node's `HPE_*` parser errors: the store answered, so it
 * had the request; a write's 2xx whose body does not parse, which the caller will get as an
 * error); and 500/502/504 answers (500 OperationTimedOut: "the operation may or
 * may not have succeeded"). 503 ServerBusy, 429 and 408 say the request was not processed;
 * a connection that never opened cannot have carried it. Nor is a failed changeset inside a
 * `$batch` answered 202, whatever its status: the transaction was rolled back.
 */
export function isUnknownOutcome(result: AttemptResult): boolean {
  // A 2xx whose body could not be read (runAttempt): applied, says the service, but the caller will see a PARSE_ERROR.
  if (result.unreadableBody === true) return true;
  const cls = result.outcomeClass;
  if (cls !== "transient" && cls !== "timeout") return false;
  // A failed changeset rolled its transaction back: whatever its status, nothing was applied.
  if (result.inChangeset === true) return false;
  if (result.status !== undefined) return result.status === 500 || result.status === 502 || result.status === 504;
  const code = errorCodeOf(result.error);
  return code === undefined || !NOT_SENT_ERROR_CODES.has(code);
}
