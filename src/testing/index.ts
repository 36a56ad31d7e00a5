// Public surface of azure-storage-resilience/testing: helpers for users' own test suites
// (docs/testing.md). Kept out of the main entry so that production code never loads them.

export type { SimulatorOptions, RebalancingSimulator } from "./simulator/rebalancingSimulator.js";
export { DEFAULT_SIMULATOR_OPTIONS, startRebalancingSimulator } from "./simulator/rebalancingSimulator.js";
export type { FaultKind, FaultMatch, FaultRule, RetryAfterHeader, SimulatedRequestInfo } from "./simulator/faultRule.js";
export { FAULT_KINDS } from "./simulator/faultRule.js";
export type { RecordFilter, RequestRecord, RequestTotals } from "./simulator/requestLog.js";
export type { PartitionScope, StorageService } from "../address/partitionScope.js";

export type { RunningAzurite, StartAzuriteOptions } from "./azurite/startAzurite.js";
export { DEFAULT_START_AZURITE_OPTIONS, startAzurite } from "./azurite/startAzurite.js";
export { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "./azurite/devstoreAccount.js";
