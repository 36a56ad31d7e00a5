import type { CircuitState } from "./circuitStateSource.js";

/**
 * One partition's circuit, as a small synchronous state machine (no timers: `now` is passed
 * in). It opens only on a partition that serves nothing: `consecutiveFailures` rebalancing
 * failures in a row *and* no success for {@link QUIET_IN_MS}. A hot partition keeps serving
 * at capacity, so its successes keep arriving between throttled answers and it never opens
 * (its pacing handles it); a partition being moved answers nothing but failures.
 *
 * Why not opossum, which this package used before: opossum opens on an error *percentage*,
 * exactly the rule that starved hot partitions, and its `fire(action)` wraps an attempt in a
 * promise, where the retry loop and `partitionStatus` need a synchronous answer.
 */
export class Circuit {
  state: CircuitState = "closed";
  /** When the circuit last opened; the probe is due `resetTimeoutInMs` later. */
  openedAt = 0;
  consecutiveFailures = 0;
  /** Treats the moment it was made (at a failure) as the last known good one. */
  lastSuccessAt: number;
  /** A half-open circuit lets one probe through; true while it is out. */
  probeOut = false;
  /** When the probe out was admitted. */
  probeAdmittedAt = 0;

  constructor(now: number) {
    this.lastSuccessAt = now;
  }

  /** Whether an attempt may go out now; moves open to half-open when the probe is due. */
  admits(now: number, resetTimeoutInMs: number): boolean {
    if (this.state === "open" && now - this.openedAt >= resetTimeoutInMs) this.state = "half_open";
    if (this.state === "closed") return true;
    // A probe unreported for a reset period was admitted but never sent (its operation ended first: retry
    // budget spent, aborted while paced) or is lost: let another go, or the circuit would refuse for ever.
    if (this.state === "half_open" && (!this.probeOut || now - this.probeAdmittedAt >= resetTimeoutInMs)) {
      this.probeOut = true;
      this.probeAdmittedAt = now;
      return true;
    }
    return false;
  }

  /** Milliseconds until a refused attempt may ask again: the probe time, or a short poll while a probe is out. */
  retryAfterInMs(now: number, resetTimeoutInMs: number, halfOpenPollInMs: number): number {
    return this.state === "open" ? Math.max(0, this.openedAt + resetTimeoutInMs - now) : halfOpenPollInMs;
  }

  /**
   * Counts an attempt's outcome and returns the new state. `evidence` is `"served"` (any
   * answer that proves the partition works, even a 404), `"failed"` (a rebalancing outcome)
   * or `"none"` (aborted: says nothing about the partition).
   */
  record(evidence: "served" | "failed" | "none", now: number, consecutiveFailures: number): CircuitState {
    if (evidence === "served") {
      this.consecutiveFailures = 0;
      this.lastSuccessAt = now;
      this.probeOut = false;
      this.state = "closed";
      return this.state;
    }
    if (this.state === "half_open" && this.probeOut) {
      // The probe failed, or was aborted (no evidence to close on): open again.
      this.probeOut = false;
      this.open(now);
      return this.state;
    }
    if (evidence === "failed") {
      this.consecutiveFailures += 1;
      if (this.state === "closed" && this.consecutiveFailures >= consecutiveFailures && now - this.lastSuccessAt >= QUIET_IN_MS) this.open(now);
    }
    return this.state;
  }

  private open(now: number): void {
    this.state = "open";
    this.openedAt = now;
  }
}

/**
 * How long a partition must have served nothing before its circuit may open. A hot
 * partition at capacity answers successes every few milliseconds between its throttled
 * ones; a quarter second without one, across several failures in a row, is a partition
 * that serves nothing. For a partition that takes a few operations a second, this delays its
 * circuit by one or two attempts at most (docs/benchmarks.md, "Why the code is as it is").
 */
export const QUIET_IN_MS = 250;
