import { vi } from "vitest";
import { createPipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../../src/address/requestAddress.js";
import type { Admission, SendAdmission } from "../../src/breaker/attemptGate.js";
import type { PartitionBreaker } from "../../src/breaker/partitionBreaker.js";

/** A Tables entity URL in account `acct`, table `orders`, partition `pk`. */
export const entityUrlOf = (pk: string): string => `https://acct.table.core.windows.net/orders(PartitionKey='${pk}',RowKey='r')`;

/** The address of a GET of {@link entityUrlOf}(pk). */
export const entityAddressOf = (pk: string): RequestAddress => readRequestAddress(createPipelineRequest({ url: entityUrlOf(pk), method: "GET" }), "table");

/** The scope key of partition `p` of {@link entityUrlOf}. */
export const SCOPE_P = "table|acct|orders|p";

/** `admission` as a send; throws (failing the test) on a refusal. */
export function sent(admission: Admission): SendAdmission {
  if (admission.decision !== "send") throw new Error(`expected a send, got ${JSON.stringify(admission)}`);
  return admission;
}

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

/**
 * Opens `own`'s circuit on its own (throttled six times, 100 ms apart, while another partition serves),
 * then throttles the account as a whole through `others` ({@link throttleAccountAsAWhole}): `own`'s circuit
 * is its partition's, not held by the account, so its probe takes an account slot (a held circuit's probe
 * comes once per ACCOUNT_PROBE_IN_MS and is not paced).
 */
export function openOwnCircuitThenThrottleAccount(breaker: PartitionBreaker, own: RequestAddress, others: readonly RequestAddress[]): void {
  const serving = entityAddressOf("serving");
  for (let i = 0; i < 6; i++) {
    const failing = breaker.admit(own, 30_000);
    if (failing.decision === "send") breaker.record(own, failing, { outcomeClass: "throttled", status: 503, errorCode: "ServerBusy" });
    const ok = breaker.admit(serving, 30_000);
    if (ok.decision === "send") breaker.record(serving, ok, { outcomeClass: "success", status: 200 });
    vi.advanceTimersByTime(100);
  }
  throttleAccountAsAWhole(breaker, others);
}
