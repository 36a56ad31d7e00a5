import type { PipelineRequest } from "@azure/core-rest-pipeline";
import CircuitBreaker from "opossum";
import { CircuitOpenError } from "../errors/circuitOpenError.js";
import { logger } from "../logging/logger.js";
import type { StorageService } from "../partition/partitionScope.js";
import {
  admitDirectly,
  operationEnded,
  settleDirectly,
  type AttemptGate,
  type AttemptResult,
  type DirectGate,
  type OperationAwareGate,
} from "../policies/attemptGate.js";
import { createBucketRotator } from "./bucketRotator.js";
import type { CircuitState, CircuitStateSource, CircuitTransition } from "./circuitStateSource.js";
import { isRebalancingOutcome } from "./isRebalancingOutcome.js";
import {
  resolvePartitionBreakerOptions,
  ROLLING_WINDOW_BUCKETS,
  type PartitionBreakerMode,
  type PartitionBreakerOptions,
} from "./partitionBreakerOptions.js";
import { createRequestScopeReader, type RequestScope } from "./requestScope.js";
import { createScopeRegistry } from "./scopeRegistry.js";

/**
 * A circuit breaker per partition scope, as the retry policy's {@link AttemptGate}:
 * rebalancing failures (503 ServerBusy, timeouts, connection resets) past the threshold
 * open one partition's circuit, and its attempts then fail locally with a
 * `CircuitOpenError` until one probe, a reset period later, finds it back.
 */
export interface PartitionBreaker extends AttemptGate, CircuitStateSource {
  /** What callers meet while a circuit is open. */
  readonly mode: PartitionBreakerMode;
  /** Live circuits (at most `maxScopes`): scopes with a rebalancing failure in their recent past. */
  readonly size: number;
  /** The state of one scope's circuit, or undefined when it has none (no rebalancing failure lately). */
  stateOf(scope: string): CircuitState | undefined;
  /** Keys of the scopes whose circuit is open. */
  openScopes(): string[];
  /** Keys of the scopes whose circuit is half-open (a probe is allowed or in flight). */
  halfOpenScopes(): string[];
  /** Shuts every circuit down and stops every timer; later attempts pass straight through. Idempotent. */
  dispose(): void;
}

/** While a probe is in flight, waiters retry after this fraction of the reset period: gently, but soon after it closes. */
const HALF_OPEN_POLL_DIVISOR = 10;
const MIN_HALF_OPEN_POLL_IN_MS = 10;

interface Circuit {
  key: string;
  service: StorageService;
  breaker: CircuitBreaker<FireArgs, AttemptResult>;
  state: CircuitState;
  openedAt: number;
  /** Rebalancing failures since the last attempt that was not one. */
  consecutiveFailures: number;
}

type FireArgs = [attempt: () => Promise<AttemptResult>, circuit: Circuit];

/**
 * Carries a rebalancing outcome through opossum as a rejection, so it counts as a
 * failure; `run` unwraps it and returns the result unchanged. Not an `Error`: it never
 * leaves this module, so it needs no stack.
 */
class RebalancingSignal {
  readonly result: AttemptResult;
  constructor(result: AttemptResult) {
    this.result = result;
  }
}

/** opossum's action, shared by every circuit: one attempt, with rebalancing outcomes turned into failures. */
async function guardedAttempt(attempt: () => Promise<AttemptResult>, circuit: Circuit): Promise<AttemptResult> {
  const result = await attempt();
  if (isRebalancingOutcome(result.outcomeClass)) throw new RebalancingSignal(result);
  // An aborted probe proves nothing about the partition: reopen rather than close on no evidence.
  if (result.outcomeClass === "aborted" && circuit.state === "half_open") throw new RebalancingSignal(result);
  return result;
}

/** opossum counts a rejection as a failure unless this returns true. */
function isNotRebalancing(error: unknown): boolean {
  return !(error instanceof RebalancingSignal);
}

function isOpossumError(error: unknown, code: string): boolean {
  return error instanceof Error && CircuitBreaker.isOurError(error) && (error as { code?: unknown }).code === code;
}

/**
 * Creates a {@link PartitionBreaker}. Circuits are opossum breakers made per scope at its
 * first rebalancing failure (until then its attempts go out unwatched; while no scope has
 * a circuit, not even the scope is read) and retired once closed with no failure left in
 * their window, with opossum's own timeout off (the retry policy owns timeouts), no snapshots, no
 * latency percentiles and one shared bucket-rotation timer; at most `maxScopes` live,
 * idle ones swept after `idleTtlInMs`, every evicted one `shutdown()`. Every timer is
 * `unref()`ed.
 *
 * @example
 * const breaker = createPartitionBreaker({ mode: "fail", service: "table" });
 * const policy = resilientRetryPolicy({ gate: breaker });
 * // ... on shutdown:
 * breaker.dispose();
 */
export function createPartitionBreaker(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const o = resolvePartitionBreakerOptions(options);
  const readScope = createRequestScopeReader(o.service, o.getScope);
  const rotator = createBucketRotator(Math.floor(o.rollingWindowInMs / ROLLING_WINDOW_BUCKETS));
  const halfOpenPollInMs = Math.max(MIN_HALF_OPEN_POLL_IN_MS, Math.round(o.resetTimeoutInMs / HALF_OPEN_POLL_DIVISOR));
  const openKeys = new Set<string>();
  const halfOpenKeys = new Set<string>();
  const listeners = new Set<(transition: CircuitTransition) => void>();
  const registry = createScopeRegistry<Circuit>({
    maxEntries: o.maxScopes,
    idleTtlInMs: o.idleTtlInMs,
    // A closed circuit whose window holds no failure any more goes back to costing nothing.
    isRetirable: (circuit) => circuit.state === "closed" && circuit.breaker.stats.failures === 0,
    onEvict: (key, circuit) => {
      openKeys.delete(key);
      halfOpenKeys.delete(key);
      circuit.breaker.shutdown();
    },
  });
  let disposed = false;

  const transition = (circuit: Circuit, to: CircuitState): void => {
    const from = circuit.state;
    if (from === to) return;
    circuit.state = to;
    setFor(from)?.delete(circuit.key);
    setFor(to)?.add(circuit.key);
    if (to === "open") circuit.openedAt = Date.now();
    logger.warning(describeTransition(circuit.key, from, to, o.resetTimeoutInMs));
    const event: CircuitTransition = { service: circuit.service, scope: circuit.key, from, to };
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warning(`A circuit transition listener threw and was ignored: ${(error as Error)?.name ?? "error"}`);
      }
    }
  };
  const setFor = (state: CircuitState): Set<string> | undefined =>
    state === "open" ? openKeys : state === "half_open" ? halfOpenKeys : undefined;

  const addCircuit = (scope: RequestScope): Circuit => {
    const circuit = { key: scope.key, service: scope.service, state: "closed", openedAt: 0, consecutiveFailures: 0 } as Circuit;
    circuit.breaker = new CircuitBreaker<FireArgs, AttemptResult>(guardedAttempt, {
      name: scope.key,
      timeout: false,
      resetTimeout: o.resetTimeoutInMs,
      errorThresholdPercentage: o.errorThresholdPercentage,
      volumeThreshold: o.volumeThreshold,
      rollingCountTimeout: o.rollingWindowInMs,
      rollingCountBuckets: ROLLING_WINDOW_BUCKETS,
      rollingPercentilesEnabled: false,
      enableSnapshots: false,
      rotateBucketController: rotator.controller,
      errorFilter: isNotRebalancing,
    });
    circuit.breaker.on("success", () => (circuit.consecutiveFailures = 0));
    circuit.breaker.on("failure", () => {
      circuit.consecutiveFailures += 1;
      if (circuit.consecutiveFailures >= o.consecutiveFailures && circuit.breaker.closed) circuit.breaker.open();
    });
    circuit.breaker.on("open", () => transition(circuit, "open"));
    circuit.breaker.on("halfOpen", () => transition(circuit, "half_open"));
    circuit.breaker.on("close", () => transition(circuit, "closed"));
    registry.add(scope.key, circuit);
    return circuit;
  };

  /** The last request whose scope was read, and that scope: an attempt's admit and settle read the same one. */
  let lastRequest: PipelineRequest | undefined;
  let lastScope: RequestScope | undefined;
  const scopeOf = (request: PipelineRequest): RequestScope | undefined => {
    if (request !== lastRequest) {
      lastScope = readScope.read(request);
      lastRequest = request;
    }
    return lastScope;
  };

  /**
   * The circuit an attempt must go through, if its scope has one (touched as used). While no
   * scope has a circuit, which is the usual case, not even the scope is read.
   */
  const circuitOf = (request: PipelineRequest): Circuit | undefined => {
    if (disposed || registry.size() === 0) return undefined;
    const scope = scopeOf(request);
    return scope === undefined ? undefined : registry.touch(scope.key);
  };

  /** Admits an attempt to go out unwrapped (the ticket is the request itself) when its scope has no circuit. */
  const admit = (request: PipelineRequest): PipelineRequest | undefined => (circuitOf(request) === undefined ? request : undefined);

  /**
   * Counts an unwrapped attempt. A success needs nothing unless some scope has a circuit
   * (this one may have got one meanwhile: it counts there). A rebalancing failure gives the
   * scope a circuit, if it had none, and is recorded there as a failure. Returns what to
   * await, if anything.
   */
  const settle = (request: PipelineRequest, result: AttemptResult): Promise<void> | undefined => {
    if (disposed) return undefined;
    const rebalancing = isRebalancingOutcome(result.outcomeClass);
    if (!rebalancing && registry.size() === 0) return undefined;
    const scope = scopeOf(request);
    if (scope === undefined) return undefined;
    if (!rebalancing) {
      const circuit = registry.peek(scope.key);
      return circuit === undefined ? undefined : recordOutcome(circuit, result);
    }
    return recordOutcome(registry.touch(scope.key) ?? addCircuit(scope), result);
  };

  const attemptThenSettle = async (request: PipelineRequest, attempt: () => Promise<AttemptResult>): Promise<AttemptResult> => {
    const result = await attempt();
    await settle(request, result);
    return result;
  };

  const attemptOnCircuit = async (circuit: Circuit, attempt: () => Promise<AttemptResult>): Promise<AttemptResult> => {
    try {
      return await circuit.breaker.fire(attempt, circuit);
    } catch (error) {
      if (error instanceof RebalancingSignal) return error.result;
      if (isOpossumError(error, "EOPENBREAKER")) throw new CircuitOpenError(circuit.key, retryAfterInMs(circuit));
      // Shut down under us (a transition listener disposed the breaker): no circuit, no verdict.
      if (isOpossumError(error, "ESHUTDOWN")) return attempt();
      throw error;
    }
  };

  /** Counts an attempt that already happened on `circuit` (an open one ignores it, as it would a late answer). */
  const recordOutcome = async (circuit: Circuit, result: AttemptResult): Promise<void> => {
    try {
      await circuit.breaker.fire(() => Promise.resolve(result), circuit);
    } catch {
      // The rebalancing signal (a counted failure), or the circuit was open or shut down: nothing to report.
    }
  };

  const retryAfterInMs = (circuit: Circuit): number =>
    circuit.state === "open" ? Math.max(0, circuit.openedAt + o.resetTimeoutInMs - Date.now()) : halfOpenPollInMs;

  // Told by the retry policy when an operation ends, so its remembered scope goes at once.
  const breaker: PartitionBreaker & OperationAwareGate & DirectGate = {
    mode: o.mode,
    waitWhenOpen: o.mode === "wait",
    get size() {
      return registry.size();
    },
    run(request: PipelineRequest, attempt: () => Promise<AttemptResult>): Promise<AttemptResult> {
      const circuit = circuitOf(request);
      return circuit === undefined ? attemptThenSettle(request, attempt) : attemptOnCircuit(circuit, attempt);
    },
    // The retry loop's unwrapped path: a scope with no circuit costs no promise layer of ours.
    [admitDirectly]: admit,
    [settleDirectly]: settle as DirectGate[typeof settleDirectly], // its tickets are requests
    [operationEnded](request: PipelineRequest): void {
      readScope.release(request);
      // Not kept past its operation (its body may be large).
      if (request === lastRequest) {
        lastRequest = undefined;
        lastScope = undefined;
      }
    },
    stateOf(scope) {
      return registry.peek(scope)?.state;
    },
    openScopes() {
      return [...openKeys];
    },
    halfOpenScopes() {
      return [...halfOpenKeys];
    },
    stateCounts() {
      return { closed: registry.size() - openKeys.size - halfOpenKeys.size, open: openKeys.size, half_open: halfOpenKeys.size };
    },
    onTransition(listener) {
      if (typeof listener !== "function") throw new TypeError("onTransition needs a listener function.");
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      registry.clear();
      rotator.stop();
      listeners.clear();
    },
  };
  return breaker;
}

function describeTransition(key: string, from: CircuitState, to: CircuitState, resetTimeoutInMs: number): string {
  const scope = `Circuit for partition scope "${key}"`;
  if (to === "open") {
    const why = from === "half_open" ? "the probe failed" : "rebalancing failures passed the threshold";
    return `${scope} opened (${why}); next probe in ${resetTimeoutInMs} ms.`;
  }
  if (to === "half_open") return `${scope} is half-open: one probe may go through.`;
  return `${scope} closed: the partition answers again.`;
}
