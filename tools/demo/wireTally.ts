import type { RequestRecord } from "azure-storage-resilience/testing";

/**
 * A read-back's client request id is its write's, plus this suffix (docs/data-safety.md says
 * so as part of what the package sends; test/tools/demo/runStats.test.ts checks it matches).
 */
export const READ_BACK_REQUEST_ID_SUFFIX = "-readback";

/** What the service saw of one partition: requests, and the faults it answered with. */
export interface WireCounts {
  /**
   * Requests that reached the service (the simulator): each operation's first attempt (none
   * for one refused by an open circuit), its retries, and read-backs.
   */
  requests: number;
  /**
   * Of those, the ones repeating an operation already seen (same client request id): its
   * retries. Only ever grows; an operation waiting on an open circuit sent nothing and
   * changes nothing.
   */
  retries: number;
  /**
   * Of those, the package's read-backs: GETs settling a write whose outcome was lost (their
   * client request id is the write's plus `-readback`). Not operations of the application.
   */
  readBacks: number;
  /** Answered 503 ServerBusy (partition offline or over its target). */
  throttles: number;
  /** Answered 500 OperationTimedOut. */
  timeouts: number;
  /** Connection reset, before or after the request reached storage. */
  resets: number;
}

/** Counts the simulator's records per partition; feed it from `onRecord`. */
export class WireTally {
  readonly #byPartition = new Map<string, WireCounts>();
  // One entry per operation that reached the wire: bounded by the run's planned operations.
  readonly #seen = new Set<string>();

  /** Counts one record; requests without a partition (table creation) are ignored. */
  add(record: RequestRecord): void {
    const partition = record.scope?.partition;
    if (partition === undefined) return;
    let counts = this.#byPartition.get(partition);
    if (counts === undefined) this.#byPartition.set(partition, (counts = emptyWireCounts()));
    counts.requests++;
    // Without an id a request counts as a first attempt: retries are never invented.
    if (record.clientRequestId?.endsWith(READ_BACK_REQUEST_ID_SUFFIX) === true) counts.readBacks++;
    else if (record.clientRequestId !== undefined) {
      if (this.#seen.has(record.clientRequestId)) counts.retries++;
      else this.#seen.add(record.clientRequestId);
    }
    if (record.status === 503) counts.throttles++;
    if (record.fault === "operationTimedOut") counts.timeouts++;
    if (record.fault === "resetBeforeForward" || record.fault === "resetAfterForward") counts.resets++;
  }

  /** The counts of one partition (zeros when it saw nothing). */
  of(partition: string): WireCounts {
    return { ...(this.#byPartition.get(partition) ?? emptyWireCounts()) };
  }
}

/** All zeros. */
export function emptyWireCounts(): WireCounts {
  return { requests: 0, retries: 0, readBacks: 0, throttles: 0, timeouts: 0, resets: 0 };
}
