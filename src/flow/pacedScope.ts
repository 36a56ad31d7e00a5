/** One paced scope and the send rate it is held to, as `PartitionBreaker.pacedScopes()` lists them. */
export interface PacedScope {
  /** The scope key (no secrets): a partition's names account, table or container, and partition; an account's is `service|account`. */
  scope: string;
  /** Attempts per second. */
  ratePerSecond: number;
  /** A partition, or a whole account throttling as a whole (docs/flow-control.md). Absent: a partition. */
  level?: "partition" | "account";
}
