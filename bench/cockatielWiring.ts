// How a user wires cockatiel around a TableClient by hand today: a retry policy wrapped
// around one circuit breaker per partition key. docs/benchmarks.md shows this code.
import { isRestError } from "@azure/core-rest-pipeline";
import { circuitBreaker, ConsecutiveBreaker, ExponentialBackoff, handleWhen, retry, type CircuitBreakerPolicy } from "cockatiel";

/** Settings of the hand-wired cockatiel configuration. */
export interface CockatielWiringOptions {
  /** Retries after the first attempt (cockatiel's `maxAttempts` counts retries). Defaults to 3, like the SDK. */
  maxRetries?: number;
  /** Consecutive failures that open a partition's circuit. Defaults to 5. */
  consecutiveFailures?: number;
  /** How long a circuit stays open before a probe. Defaults to 3000, like this package's breaker. */
  halfOpenAfterInMs?: number;
}

const TRANSIENT_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "ESOCKETTIMEDOUT", "EPIPE", "REQUEST_SEND_ERROR"]);

/** What a careful user retries: 408, 429, 5xx except 501/505, and connection errors. */
export function isTransientStorageError(error: unknown): boolean {
  if (!isRestError(error)) return false;
  const status = error.statusCode;
  if (status === undefined) return error.code !== undefined && TRANSIENT_CODES.has(error.code);
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/** A `run(partitionKey, fn)` that sends `fn` through retry → the partition's breaker → the SDK call. */
export interface CockatielWiring {
  run<T>(partitionKey: string, fn: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Live breakers (one per partition key ever seen: nothing evicts them). */
  readonly size: number;
}

/**
 * The wiring. The SDK client must be built with `retryOptions: { maxRetries: 0 }` so the
 * SDK does not retry underneath. An open circuit throws `BrokenCircuitError`, which the
 * retry policy's predicate does not match, so callers fail fast while a partition is open.
 */
export function createCockatielWiring(options: CockatielWiringOptions = {}): CockatielWiring {
  const transient = handleWhen(isTransientStorageError);
  const retryPolicy = retry(transient, { maxAttempts: options.maxRetries ?? 3, backoff: new ExponentialBackoff() });
  const breakers = new Map<string, CircuitBreakerPolicy>();
  const breakerFor = (partitionKey: string): CircuitBreakerPolicy => {
    let breaker = breakers.get(partitionKey);
    if (breaker === undefined) {
      breaker = circuitBreaker(transient, {
        halfOpenAfter: options.halfOpenAfterInMs ?? 3_000,
        breaker: new ConsecutiveBreaker(options.consecutiveFailures ?? 5),
      });
      breakers.set(partitionKey, breaker);
    }
    return breaker;
  };
  return {
    run: (partitionKey, fn, signal) => retryPolicy.execute(({ signal: s }) => breakerFor(partitionKey).execute(({ signal: inner }) => fn(inner), s), signal),
    get size() {
      return breakers.size;
    },
  };
}
