import { hasCodeAndName, ResilienceError } from "./resilienceError.js";

/**
 * Thrown, without touching the network, when the request's partition is paced (it answered
 * throttled: it is hot) and the attempt's turn would come after the operation's deadline.
 * Failing at once beats waiting to the deadline for nothing; `retryAfterInMs` says when the
 * partition's queue will have drained that far.
 */
export class PartitionBusyError extends ResilienceError {
  /** The paced partition scope, e.g. "table|myaccount|orders|2024-06". */
  readonly scope: string;
  /** Milliseconds until an attempt for this scope could be sent. */
  readonly retryAfterInMs: number;

  constructor(scope: string, retryAfterInMs: number, options?: { cause?: unknown }) {
    super(
      "PARTITION_BUSY",
      `The partition scope "${scope}" is throttled and paced; its queue would outlast this operation's deadline. ` +
        `Retry after ${Math.ceil(retryAfterInMs)} ms.`,
      options,
    );
    this.name = "PartitionBusyError";
    this.scope = scope;
    this.retryAfterInMs = retryAfterInMs;
  }
}

/** True for a {@link PartitionBusyError}, even from another copy of the package. */
export function isPartitionBusyError(error: unknown): error is PartitionBusyError {
  return hasCodeAndName(error, "PARTITION_BUSY", "PartitionBusyError");
}
