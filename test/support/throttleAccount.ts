import { vi } from "vitest";
import type { RequestAddress } from "../../src/address/requestAddress.js";
import type { PartitionBreaker } from "../../src/breaker/partitionBreaker.js";

/**
 * Throttles an account as a whole through `breaker`, under fake timers: for a second, every
 * partition in `partitions` answers each attempt admitted 503 ServerBusy, 40 rounds 25 ms
 * apart. The account gets paced and the partitions' circuits open.
 */
export function throttleAccountAsAWhole(breaker: PartitionBreaker, partitions: readonly RequestAddress[]): void {
  const throttled = { outcomeClass: "throttled" as const, status: 503, errorCode: "ServerBusy" };
  for (let i = 0; i < 40; i++) {
    for (const address of partitions) {
      const admission = breaker.admit(address, 30_000);
      if (admission.decision === "send") breaker.record(address, admission, throttled);
    }
    vi.advanceTimersByTime(25);
  }
}
