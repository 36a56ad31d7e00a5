import { vi, type Mock } from "vitest";
import { createHttpHeaders, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import type { RequestAddress } from "../../src/address/requestAddress.js";
import { SEND_NOW, type Admission, type AdmissionRequest, type AttemptGate, type Wait } from "../../src/breaker/attemptGate.js";
import type { PartitionBreaker } from "../../src/breaker/partitionBreaker.js";
import type { WakeSource } from "../../src/timing/wake.js";

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

/** A wait a scripted gate hands out: for a paced scope's next send, or a probe of one that serves nothing. */
export function waitOf(reason: Wait["reason"], delayInMs: number, wake?: WakeSource): Wait {
  return { decision: "wait", reason, delayInMs, wake };
}

/**
 * A gate that answers each new ask from a list, then sends at once; a wait asked again is let go
 * (paced, when it waited for pacing). Records what is given back (`release`).
 */
export function gateOf(...admissions: Admission[]): AttemptGate & { release: Mock<NonNullable<AttemptGate["release"]>> } {
  return {
    admit: (_address: RequestAddress, ask: AdmissionRequest): Admission =>
      ask.waited !== undefined ? { decision: "send", paced: ask.waited.reason === "pacing" } : (admissions.shift() ?? SEND_NOW),
    record: () => undefined,
    release: vi.fn<NonNullable<AttemptGate["release"]>>(),
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
