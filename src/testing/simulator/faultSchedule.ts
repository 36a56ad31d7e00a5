import { isTableBatchRequest, matchesRule, validateFaultRule, type FaultRule, type SimulatedRequestInfo, type ValidatedFaultRule } from "./faultRule.js";

/** Clock and randomness for a {@link FaultSchedule}; injected so tests need no timers. */
export interface FaultScheduleOptions {
  /** Monotonic milliseconds. */
  now: () => number;
  /** Floats in [0, 1); the simulator passes a seeded {@link mulberry32}. */
  random: () => number;
}

interface ActiveRule {
  rule: ValidatedFaultRule;
  startsAt: number;
  endsAt: number;
  remaining: number;
  /** `ratePerSecond` rules: a token bucket per partition or account key (a test's handful of keys). */
  buckets: Map<string, { tokens: number; at: number }>;
  onRemoved: ((rule: ValidatedFaultRule) => void) | undefined;
}

/**
 * The rules in force and the decision which one, if any, faults a request. Pure
 * bookkeeping: no timers, time is read from `now` when a request arrives. Rules are
 * tried in the order they were added; the first whose window, match, remaining count
 * and probability draw all pass wins. The generator is drawn only for a matching rule
 * with probability below 1, so a seed replays the same faults for the same requests.
 */
export class FaultSchedule {
  readonly #now: () => number;
  readonly #random: () => number;
  #rules: ActiveRule[] = [];

  constructor(options: FaultScheduleOptions) {
    this.#now = options.now;
    this.#random = options.random;
  }

  /**
   * Validates and adds a rule; returns a function that removes it (idempotent). `onRemoved`
   * is called once with the validated rule when it is removed or cleared (not when it ends by time).
   */
  add(rule: FaultRule, onRemoved?: (rule: ValidatedFaultRule) => void): () => void {
    const validated = validateFaultRule(rule);
    const startsAt = this.#now() + validated.startInMs;
    const active: ActiveRule = { rule: validated, startsAt, endsAt: startsAt + validated.durationInMs, remaining: validated.count, buckets: new Map(), onRemoved };
    this.#rules.push(active);
    return () => {
      if (!this.#rules.includes(active)) return;
      this.#rules = this.#rules.filter((candidate) => candidate !== active);
      active.onRemoved?.(active.rule);
    };
  }

  /** Removes every rule. */
  clear(): void {
    const removed = this.#rules;
    this.#rules = [];
    for (const active of removed) active.onRemoved?.(active.rule);
  }

  /** The number of rules that have not yet ended (by time or count). */
  get size(): number {
    this.#dropEnded(this.#now());
    return this.#rules.length;
  }

  /** The rule that faults this request, consuming one of its count; undefined to pass it through. */
  select(request: SimulatedRequestInfo): ValidatedFaultRule | undefined {
    return this.selectTimed(request)?.rule;
  }

  /** {@link select}, with when the rule ends (on the `now` clock): a `freeze` holds its requests until then. */
  selectTimed(request: SimulatedRequestInfo): { rule: ValidatedFaultRule; endsAt: number } | undefined {
    const now = this.#now();
    this.#dropEnded(now);
    for (const active of this.#rules) {
      if (now < active.startsAt) continue;
      // Refused connections never become requests; the simulator applies these rules to its listener.
      if (active.rule.kind === "refuseConnections") continue;
      if (!matchesRule(active.rule.match, request)) continue;
      if (active.rule.kind === "failChangeset" && !isTableBatchRequest(request)) continue;
      if (active.rule.probability < 1 && this.#random() >= active.rule.probability) continue;
      if (active.rule.ratePerSecond !== undefined && withinRate(active, request, now)) continue;
      active.remaining--;
      return { rule: active.rule, endsAt: active.endsAt };
    }
    return undefined;
  }

  #dropEnded(now: number): void {
    this.#rules = this.#rules.filter((active) => active.remaining > 0 && now < active.endsAt);
  }
}

/**
 * Takes the request's tokens from its partition's (or account's) bucket, refilled at
 * `ratePerSecond` and holding one second's worth; false when they are not there, and the
 * request is faulted. A request without a partition is limited per account.
 */
function withinRate(active: ActiveRule, request: SimulatedRequestInfo, now: number): boolean {
  const rate = active.rule.ratePerSecond as number;
  const scope = request.scope;
  const key =
    active.rule.rateScope === "account" || scope?.partition === undefined
      ? `${scope?.account ?? ""}`
      : `${scope.account}|${scope.resource}|${scope.partition}`;
  const bucket = active.buckets.get(key) ?? { tokens: rate, at: now };
  bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) * rate) / 1000);
  bucket.at = now;
  active.buckets.set(key, bucket);
  const weight = operationsIn(request);
  if (bucket.tokens < weight) return false;
  bucket.tokens -= weight;
  return true;
}

/** A `$batch` counts by the operations it carries (the scalability targets count entities); anything else as one. */
function operationsIn(request: SimulatedRequestInfo): number {
  if (request.body === undefined || !request.path.includes("$batch")) return 1;
  return Math.max(1, request.body.match(/^(?:POST|PUT|MERGE|PATCH|DELETE|GET) /gm)?.length ?? 1);
}
