import type { OperationResult } from "./operationResult.js";
import { isWrite } from "./workload.js";

/** What reading the store directly shows about the run's writes, in entities. */
export interface Verification {
  /** Entities whose write the application saw succeed. */
  acknowledged: number;
  /** Acknowledged entities found in the store. */
  found: number;
  /** Acknowledged entities missing from the store: must be 0. */
  lost: number;
  /** Entities whose write was reported failed (or cut off) but that the store holds. */
  failedButStored: number;
  /** Of those, the ones whose failure was not marked possibly applied: the package promises 0. */
  failedButStoredUnmarked: number;
  /** Entities whose write was reported failed (or cut off) and that the store does not hold. */
  failedNotStored: number;
  /** Up to 10 lost `partition/rowKey`s, to look at. */
  lostExamples: string[];
}

/** The key {@link verifyWrites} looks entities up by. */
export function storedKey(partition: string, rowKey: string): string {
  return `${partition}\u0000${rowKey}`;
}

/**
 * Compares every write's outcome with what the store holds (`stored`: keys made with
 * {@link storedKey}). Every write in the demo has fresh RowKeys, so presence is proof. Pure.
 */
export function verifyWrites(results: readonly OperationResult[], stored: ReadonlySet<string>): Verification {
  const verification: Verification = {
    acknowledged: 0,
    found: 0,
    lost: 0,
    failedButStored: 0,
    failedButStoredUnmarked: 0,
    failedNotStored: 0,
    lostExamples: [],
  };
  for (const result of results) {
    if (!isWrite(result.kind)) continue;
    for (const rowKey of result.rowKeys) {
      const present = stored.has(storedKey(result.partition, rowKey));
      if (result.outcome === "success") {
        verification.acknowledged++;
        if (present) verification.found++;
        else {
          verification.lost++;
          if (verification.lostExamples.length < 10) verification.lostExamples.push(`${result.partition}/${rowKey}`);
        }
      } else if (present) {
        verification.failedButStored++;
        if (result.possiblyApplied !== true) verification.failedButStoredUnmarked++;
      } else verification.failedNotStored++;
    }
  }
  return verification;
}
