/**
 * What a dispatcher can ask before it sends (`handle.partitionStatus(...)`,
 * `breaker.statusOf(scope)`): is this partition taking attempts now, and if not, when to
 * come back. Cheap and synchronous.
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
