import type { AttemptGate } from "../../src/breaker/attemptGate.js";
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
