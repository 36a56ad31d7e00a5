import type { PartitionBreaker } from "../breaker/partitionBreakerInterface.js";
import { hasMethods, optionsObject, optionWhere, type OptionsShape } from "../validation/optionSchema.js";

/**
 * Options of {@link createTracingObserver}, and of `installResilience`'s `tracing` without
 * `circuitBreaker` (docs/tracing.md). Every one is optional.
 */
export interface TracingOptions {
  /**
   * Adds `azure.storage.partition` (the partition's scope key: account, table or container,
   * and partition key or blob name) to the span of each call the policy had to retry or hold.
   * Off by default, as the metrics' `partitionLabel`: partition keys and blob names can be
   * business data. Defaults to false.
   */
  partitionAttribute?: boolean;
  /**
   * The breaker whose partition state (`healthy`, `paced`, `open`, `half_open`) and paced rate
   * each wait event records. Only for {@link createTracingObserver}: `installResilience` passes
   * the client's own, and refuses this option under `tracing`. Defaults to none (the wait events
   * then carry no partition state).
   */
  circuitBreaker?: PartitionBreaker;
}

const isBoolean = (value: unknown): boolean => typeof value === "boolean";
const partitionAttribute = optionWhere<boolean>(isBoolean, "a boolean", false);

/** Validates `tracing` of installResilience (which passes the client's own breaker); errors name it by `path`. */
export const resolveTracingOptions = optionsObject({ partitionAttribute } satisfies OptionsShape<Omit<TracingOptions, "circuitBreaker">>, {
  root: "tracing options",
  owner: "tracing",
  expected: "false or an options object",
});

/** Validates createTracingObserver's options. */
export const resolveTracingObserverOptions = optionsObject(
  {
    partitionAttribute,
    circuitBreaker: optionWhere<PartitionBreaker>(hasMethods("statusOf"), "a breaker from createPartitionBreaker()"),
  } satisfies OptionsShape<TracingOptions>,
  { root: "createTracingObserver options", owner: "createTracingObserver" },
);
