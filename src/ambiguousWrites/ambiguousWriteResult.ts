/** How an ambiguous write ended; the `result` label of `ambiguous_writes_resolved_total`. */
export type AmbiguousWriteResult =
  /** An insert read back: the store holds exactly what was sent; reported as success. */
  | "applied"
  /** An insert read back: the store holds something else, or nothing; the error surfaces, marked possibly applied. */
  | "differs"
  /** The read-back failed (refused, timed out, unreadable) or was not possible; the error surfaces, marked possibly applied. */
  | "unresolved"
  /**
   * A write no read-back can settle, so none is made: a `$batch`, an update conditional
   * on an ETag, any delete. Whatever the store holds, another writer could have put it
   * there (see docs/data-safety.md); the error surfaces, marked possibly applied.
   */
  | "not_resolvable";

/** Every {@link AmbiguousWriteResult}. */
export const AMBIGUOUS_WRITE_RESULTS: readonly AmbiguousWriteResult[] = ["applied", "differs", "unresolved", "not_resolvable"];
