// What a partition breaker is to its users (the public `PartitionBreaker`) and to the retry policy (its internal AttemptGate half).
import type { StorageService } from "../address/partitionScope.js";
import type { AttemptGate } from "./attemptGate.js";

/**
 * Is this partition taking attempts now, and if not, when to come back: what a dispatcher can ask
 * before it sends (`handle.partitionStatus(...)`, `breaker.statusOf(scope)`). Cheap and synchronous.
 */
export interface PartitionStatus {
  /** `healthy`: no trouble known; `paced`: throttled lately, attempts spaced; `open`/`half_open`: its circuit. */
  readonly state: "healthy" | "paced" | "open" | "half_open";
  /** Whether an attempt sent now would go out at once (no open circuit, no pacing queue ahead of it). */
  readonly available: boolean;
  /** Milliseconds until it would be; 0 when available. */
  readonly retryAfterInMs: number;
  /** For a paced partition, its current send rate (attempts/s). */
  readonly ratePerSecond?: number;
}

/** The status of a partition with no trouble known. Shared: it holds no state. */
export const HEALTHY_PARTITION: PartitionStatus = Object.freeze({ state: "healthy", available: true, retryAfterInMs: 0 });

/**
 * The retry policy's gate (its `gate` option): one controller per partition scope, and one per account
 * (docs/flow-control.md). A scope throttled while it serves is *paced* at what it serves; one that serves
 * nothing is *out* (its circuit open): only probes go, one per reset period. No trouble: no state, no cost.
 */
export interface PartitionBreaker {
  /** Scopes with state (at most `maxScopes`): trouble in their recent past, or watched while their account has some. */
  readonly size: number;
  /** The state of one scope's circuit (`open`: it serves nothing), or undefined when the breaker holds nothing for it. */
  stateOf(scope: string): "closed" | "open" | "half_open" | undefined;
  /** Keys of the scopes whose circuit is open. */
  openScopes(): string[];
  /** Keys of the scopes whose circuit is half-open (a probe is allowed or in flight). */
  halfOpenScopes(): string[];
  /** Whether the scope takes an attempt now, and when to come back (for a dispatcher that asks first: a queue consumer); changes nothing. */
  statusOf(scope: string): PartitionStatus;
  /** Scopes whose attempts are paced, with their current send rate: partitions, and accounts throttling as a whole (whose rate every attempt to them also keeps). */
  pacedScopes(): readonly {
    /** The scope key (no secrets): a partition's names account, table or container, and partition; an account's is `service|account`. */
    scope: string;
    /** Attempts per second. */
    ratePerSecond: number;
    /** A partition (keyed as `statusOf` takes it), or an account throttling as a whole (docs/flow-control.md). Absent: a partition. */
    level?: "partition" | "account";
  }[];
  /**
   * Scopes with trouble of their own now, by the state of their circuit: `open` or `half_open` (out), or
   * `closed` (paced, or unserved answers since they last served). Watched scopes with none are not counted.
   */
  stateCounts(): Record<"closed" | "open" | "half_open", number>;
  /** Calls `listener` on every circuit's change of state (`scope`: its scope key, no secrets); returns a function that unsubscribes. */
  onTransition(listener: (transition: { service: StorageService; scope: string; from: "closed" | "open" | "half_open"; to: "closed" | "open" | "half_open" }) => void): () => void;
  /** Shuts every circuit down and stops every timer; later attempts pass straight through. Idempotent. */
  dispose(): void;
  /** @internal The retry policy's {@link AttemptGate}: the breaker is one, its contract is not public. */
  admit: AttemptGate["admit"];
  /** @internal See {@link AttemptGate.record}. */
  record: AttemptGate["record"];
  /** @internal See {@link AttemptGate.release}. */
  release: NonNullable<AttemptGate["release"]>;
  /** @internal See {@link AttemptGate.refusesNow}. */
  refusesNow: NonNullable<AttemptGate["refusesNow"]>;
  /** @internal See {@link AttemptGate.wakeOf}. */
  wakeOf: NonNullable<AttemptGate["wakeOf"]>;
}

/** The states of a scope's circuit, as metrics and logs name them (the public interface spells the union out: one name less in the API). */
export type CircuitState = keyof ReturnType<PartitionBreaker["stateCounts"]>;
/** One circuit's change of state, as `onTransition` delivers it. */
export type CircuitTransition = Parameters<Parameters<PartitionBreaker["onTransition"]>[0]>[0];
/** What the metrics layer reads of a breaker: its circuits per state, and their transitions. */
export type CircuitStateSource = Pick<PartitionBreaker, "stateCounts" | "onTransition">;
/** One paced scope and the send rate it is held to, as `pacedScopes()` lists them. */
export type PacedScope = ReturnType<PartitionBreaker["pacedScopes"]>[number];
