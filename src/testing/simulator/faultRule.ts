import { STORAGE_SERVICES, type PartitionScope, type StorageService } from "../../address/partitionScope.js";
import { describeValue as describe } from "../../validation/describeValue.js";
import { numberOption, validateChoiceOption, validateNumberOption } from "../../validation/optionSchema.js";

/**
 * How the simulator answers a faulted request:
 * - `serverBusy`: 503 `ServerBusy`, not forwarded (a partition being moved).
 * - `throttle`: the same 503 `ServerBusy` (or `status`, e.g. 429), for rate-based throttling.
 * - `operationTimedOut`: after `delayInMs`, 500 `OperationTimedOut`, not forwarded.
 * - `resetBeforeForward`: the connection is reset; the request never reaches storage.
 * - `resetAfterForward`: storage applies the request, then the connection is reset,
 *   so the client cannot tell whether its write happened.
 * - `cutBodyAfterForward`: storage applies the request; its status, headers (with the full
 *   `Content-Length`) and half its body reach the client, then the connection is reset:
 *   the client fails while reading the body. An answer without a body is reset like
 *   `resetAfterForward`.
 * - `slow`: forwarded, and the real response held back by `delayInMs`.
 * - `status`: a fixed `status` and `errorCode`, not forwarded (e.g. 403, 501).
 * - `failChangeset`: a Tables `$batch` (entity group transaction) answered 202 Accepted whose
 *   changeset failed with `status` (default 503) and `errorCode` (default by status, e.g.
 *   `ServerBusy`), the retry hint inside the changeset; not forwarded, as a failed
 *   transaction applies nothing. Only `POST .../$batch` requests match such a rule.
 * - `freeze`: the request is held unanswered and not forwarded until the rule ends (its
 *   `durationInMs`, required), then its connection is reset: a frozen endpoint, as with SNAT
 *   port exhaustion or a load-balancer failover. Removing the rule ends the freeze at once.
 * - `refuseConnections`: the simulator stops listening for the rule's `durationInMs`
 *   (required) and listens again on the same port; clients see `ECONNREFUSED`. Idle
 *   keep-alive connections are closed when it starts, and answers in flight finish on a
 *   connection that is then closed. It acts on connections, not requests: it takes no
 *   `match`, `count` or `probability`, and refused attempts are never recorded.
 */
export type FaultKind =
  | "serverBusy"
  | "operationTimedOut"
  | "resetBeforeForward"
  | "resetAfterForward"
  | "cutBodyAfterForward"
  | "slow"
  | "status"
  | "throttle"
  | "failChangeset"
  | "freeze"
  | "refuseConnections";

/** Every {@link FaultKind}. */
export const FAULT_KINDS: readonly FaultKind[] = [
  "serverBusy",
  "operationTimedOut",
  "resetBeforeForward",
  "resetAfterForward",
  "cutBodyAfterForward",
  "slow",
  "status",
  "throttle",
  "failChangeset",
  "freeze",
  "refuseConnections",
];

/** The header a `Retry-After` hint is sent in. */
export type RetryAfterHeader = "Retry-After" | "x-ms-retry-after-ms" | "retry-after-ms";

/** What a fault rule's predicate sees of a request. */
export interface SimulatedRequestInfo {
  /** The HTTP method. */
  method: string;
  /** Path and query, SAS parameters removed. */
  path: string;
  /** The service the request was scoped as. */
  service: StorageService;
  /** The request's partition scope, if one could be read. */
  scope: PartitionScope | undefined;
  /** Request headers, lower-case names, without `authorization` and other credentials. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as text, for Tables requests (JSON and `$batch`); undefined otherwise. */
  body: string | undefined;
}

/** Which requests a rule applies to; every given field must match. */
export interface FaultMatch {
  /** The scope's service. */
  service?: StorageService;
  /** The table, container or queue name. */
  resource?: string;
  /**
   * The PartitionKey (Tables) or blob name. A request without a partition (a
   * cross-partition query, a table operation) never matches a partition rule.
   */
  partition?: string | RegExp;
  /** The HTTP method, case-insensitive. */
  method?: string;
  /** Any further condition. */
  predicate?: (request: SimulatedRequestInfo) => boolean;
}

/** One scheduled fault. */
export interface FaultRule {
  /** A name recorded with each request it faults. */
  name?: string;
  /** Which requests it applies to. Defaults to all. */
  match?: FaultMatch;
  /** What happens to them. */
  kind: FaultKind;
  /** When the rule starts, relative to when it is added. Defaults to 0. */
  startInMs?: number;
  /** How long the rule stays active once started. Defaults to forever; required (finite) for `freeze` and `refuseConnections`. */
  durationInMs?: number;
  /** At most this many requests get the fault; then the rule ends. Defaults to unlimited. */
  count?: number;
  /** The chance that a matching request gets the fault, drawn from the seeded generator. Defaults to 1. */
  probability?: number;
  /** `operationTimedOut`: the wait before the 500. `slow`: the extra delay of the response. Defaults to 0. */
  delayInMs?: number;
  /**
   * `status`: the status to answer (required). `serverBusy`/`throttle`: replaces 503
   * (e.g. 429); `operationTimedOut`: replaces 500 (e.g. 504); `failChangeset`: the failed
   * changeset's status inside the 202, replacing 503 (e.g. 429, 500, 409).
   */
  status?: number;
  /** The `x-ms-error-code` to answer with. Defaults by kind and status. */
  errorCode?: string;
  /** A retry hint added to `serverBusy` and `throttle` answers, and to the failed changeset of `failChangeset` ones. */
  retryAfter?: { seconds?: number; ms?: number; header?: RetryAfterHeader };
  /**
   * `throttle` only: hold each partition (or, with `rateScope: "account"`, each account) to
   * this many requests per second, as Azure does past its scalability targets (a *hot*
   * partition: it keeps serving at capacity and answers the excess with the fault). A
   * token bucket per partition or account, holding one second's worth; a Tables `$batch`
   * counts by the operations it carries. Defaults to none: every matching request is faulted.
   */
  ratePerSecond?: number;
  /** What `ratePerSecond` limits: each `"partition"` scope, or each `"account"`. Defaults to `"partition"`. */
  rateScope?: "partition" | "account";
}

const RETRY_AFTER_HEADERS: readonly RetryAfterHeader[] = ["Retry-After", "x-ms-retry-after-ms", "retry-after-ms"];

/** A rule after validation, with its defaults applied and its fields copied. */
export interface ValidatedFaultRule extends FaultRule {
  match: FaultMatch;
  startInMs: number;
  durationInMs: number;
  count: number;
  probability: number;
  delayInMs: number;
}

/**
 * Checks a rule up front, throwing a TypeError or RangeError that names the field and
 * its value, and returns a copy with defaults applied (later edits to the caller's
 * object do not change the schedule).
 */
export function validateFaultRule(rule: FaultRule): ValidatedFaultRule {
  if (typeof rule !== "object" || rule === null) throw new TypeError(`rule must be an object; got ${describe(rule)}.`);
  const kind = validateChoiceOption("rule.kind", rule.kind, FAULT_KINDS);
  if (rule.name !== undefined && typeof rule.name !== "string") throw new TypeError(`rule.name must be a string; got ${describe(rule.name)}.`);
  const validated: ValidatedFaultRule = {
    ...rule,
    kind,
    match: validateMatch(rule.match),
    startInMs: numberOption({}, 0)(rule.startInMs, "rule.startInMs"),
    durationInMs: numberOption({ allowInfinity: true }, Infinity)(rule.durationInMs, "rule.durationInMs"),
    count: numberOption({ integer: true, allowInfinity: true }, Infinity)(rule.count, "rule.count"),
    probability: numberOption({ max: 1 }, 1)(rule.probability, "rule.probability"),
    delayInMs: numberOption({}, 0)(rule.delayInMs, "rule.delayInMs"),
  };
  if ((kind === "freeze" || kind === "refuseConnections") && !Number.isFinite(validated.durationInMs)) {
    throw new TypeError(`rule.durationInMs is required (a finite number) when rule.kind is "${kind}"; got ${describe(rule.durationInMs)}.`);
  }
  if (kind === "refuseConnections") {
    for (const field of ["match", "count", "probability"] as const) {
      if (rule[field] !== undefined) {
        throw new TypeError(`rule.${field} does not apply to rule.kind "refuseConnections", which refuses every connection before a request is read; got ${describe(rule[field])}.`);
      }
    }
  }
  if (rule.status !== undefined) validated.status = validateNumberOption("rule.status", rule.status, { min: 100, max: 599, integer: true });
  if (kind === "status" && rule.status === undefined) throw new TypeError('rule.status is required when rule.kind is "status"; got undefined.');
  if (rule.errorCode !== undefined && (typeof rule.errorCode !== "string" || !/^[A-Za-z0-9]+$/.test(rule.errorCode))) {
    throw new TypeError(`rule.errorCode must be an alphanumeric string; got ${describe(rule.errorCode)}.`);
  }
  if (rule.retryAfter !== undefined) validated.retryAfter = validateRetryAfter(rule.retryAfter);
  if (rule.ratePerSecond !== undefined) {
    if (kind !== "throttle") throw new TypeError(`rule.ratePerSecond applies to rule.kind "throttle" only; got kind "${kind}".`);
    validated.ratePerSecond = validateNumberOption("rule.ratePerSecond", rule.ratePerSecond, { min: 0.001, max: 1_000_000 });
  }
  if (rule.rateScope !== undefined) {
    if (rule.ratePerSecond === undefined) throw new TypeError("rule.rateScope needs rule.ratePerSecond.");
    validated.rateScope = validateChoiceOption("rule.rateScope", rule.rateScope, ["partition", "account"] as const);
  }
  return validated;
}

function validateMatch(match: FaultMatch | undefined): FaultMatch {
  if (match === undefined) return {};
  if (typeof match !== "object" || match === null) throw new TypeError(`rule.match must be an object; got ${describe(match)}.`);
  if (match.service !== undefined) validateChoiceOption("rule.match.service", match.service, STORAGE_SERVICES);
  if (match.resource !== undefined && typeof match.resource !== "string") {
    throw new TypeError(`rule.match.resource must be a string; got ${describe(match.resource)}.`);
  }
  if (match.partition !== undefined && typeof match.partition !== "string" && !(match.partition instanceof RegExp)) {
    throw new TypeError(`rule.match.partition must be a string or a RegExp; got ${describe(match.partition)}.`);
  }
  if (match.method !== undefined && typeof match.method !== "string") {
    throw new TypeError(`rule.match.method must be a string; got ${describe(match.method)}.`);
  }
  if (match.predicate !== undefined && typeof match.predicate !== "function") {
    throw new TypeError(`rule.match.predicate must be a function; got ${describe(match.predicate)}.`);
  }
  return { ...match };
}

function validateRetryAfter(retryAfter: NonNullable<FaultRule["retryAfter"]>): NonNullable<FaultRule["retryAfter"]> {
  if (typeof retryAfter !== "object" || retryAfter === null) {
    throw new TypeError(`rule.retryAfter must be an object; got ${describe(retryAfter)}.`);
  }
  const { seconds, ms, header } = retryAfter;
  if (seconds === undefined && ms === undefined) throw new TypeError("rule.retryAfter needs seconds or ms; got neither.");
  if (seconds !== undefined && ms !== undefined) throw new TypeError("rule.retryAfter takes seconds or ms, not both.");
  if (seconds !== undefined) validateNumberOption("rule.retryAfter.seconds", seconds);
  if (ms !== undefined) validateNumberOption("rule.retryAfter.ms", ms);
  if (header !== undefined) validateChoiceOption("rule.retryAfter.header", header, RETRY_AFTER_HEADERS);
  return { ...retryAfter };
}

/** True for a Tables entity group transaction: `POST .../$batch` (what a `failChangeset` rule can fault). */
export function isTableBatchRequest(request: SimulatedRequestInfo): boolean {
  return request.method.toUpperCase() === "POST" && /\/\$batch(?:\?|$)/.test(request.path);
}

/** Whether `rule` applies to `request` (schedule, count and probability aside). */
export function matchesRule(match: FaultMatch, request: SimulatedRequestInfo): boolean {
  const scope = request.scope;
  if (match.service !== undefined && (scope?.service ?? request.service) !== match.service) return false;
  if (match.resource !== undefined && scope?.resource !== match.resource) return false;
  if (match.partition !== undefined) {
    if (scope?.partition === undefined) return false;
    if (typeof match.partition === "string" ? scope.partition !== match.partition : !testRegExp(match.partition, scope.partition)) return false;
  }
  if (match.method !== undefined && match.method.toUpperCase() !== request.method.toUpperCase()) return false;
  return match.predicate === undefined || match.predicate(request);
}

/** A global or sticky RegExp keeps state between tests; start each test from the beginning. */
function testRegExp(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(text);
}
