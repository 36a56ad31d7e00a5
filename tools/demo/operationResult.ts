import type { DemoOperationKind } from "./workload.js";

/** How an operation ended, as the application saw it. */
export type OperationOutcome = "success" | "failed" | "aborted";

/** One operation's result. */
export interface OperationResult {
  id: number;
  partition: string;
  kind: DemoOperationKind;
  /** The RowKeys written (writes) or read. */
  rowKeys: string[];
  /** Milliseconds from the start of the run to the call. */
  startedAtInMs: number;
  /** Call to settlement, retries and waits included. */
  latencyInMs: number;
  outcome: OperationOutcome;
  /** The failure's HTTP status, if it had one. */
  status?: number;
  /** The failure's storage error code or network error code, if any. */
  errorCode?: string;
  /** Why the package's retry policy gave up (resilient client only). */
  stopReason?: string;
  /** The package marked the failure as possibly applied by an earlier attempt (resilient client only). */
  possiblyApplied?: boolean;
}
