import { vi, type Mock } from "vitest";
import { createHttpHeaders, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import type { RequestAddress } from "../../src/address/requestAddress.js";
import { SEND_NOW, type Admission, type AttemptGate, type SendAdmission } from "../../src/breaker/attemptGate.js";
import type { PartitionBreaker } from "../../src/breaker/partitionBreaker.js";

/**
 * A test's scripted gate as the retry policy's `gate` option. The option's public type names
 * the breaker (the gate contract is internal); at run time the policy needs only the
 * contract's methods, which it checks when it is made.
 */
export function asGateOption(gate: AttemptGate): PartitionBreaker;
export function asGateOption(gate: AttemptGate | undefined): PartitionBreaker | undefined;
export function asGateOption(gate: AttemptGate | undefined): PartitionBreaker | undefined {
  return gate as PartitionBreaker | undefined;
}

/**
 * A gate that answers each first ask from a list (a confirmation gets its reservation back),
 * then sends at once, and records what is given back (`abandon`).
 */
export function gateOf(...admissions: Admission[]): AttemptGate & { abandon: Mock<NonNullable<AttemptGate["abandon"]>> } {
  return {
    admit: (_address: RequestAddress, _remaining: number, reserved?: SendAdmission): Admission => reserved ?? admissions.shift() ?? SEND_NOW,
    record: () => undefined,
    abandon: vi.fn<NonNullable<AttemptGate["abandon"]>>(),
  };
}

/** A transport answering the given statuses in turn (503 with `ServerBusy`), and throwing on an attempt more. */
export function scripted(...statuses: number[]): Mock<SendRequest> {
  return vi.fn<SendRequest>(async (req) => {
    const status = statuses.shift();
    if (status === undefined) throw new Error("unexpected extra attempt");
    return { request: req, status, headers: createHttpHeaders(status === 503 ? { "x-ms-error-code": "ServerBusy" } : {}) } satisfies PipelineResponse;
  });
}
