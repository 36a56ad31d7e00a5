const marker = Symbol.for("azure-storage-resilience.error");

/**
 * Base class of every error the package throws on its own account (not the SDK's
 * `RestError`s, which are surfaced unchanged). Carries a stable `code` and `cause`.
 */
export class ResilienceError extends Error {
  /** Stable machine-readable code. Part of the public API. */
  readonly code: "CIRCUIT_OPEN" | "PARTITION_BUSY" | "BODY_NOT_REPLAYABLE" | "RETRY_BUDGET_EXHAUSTED" | "DOWNLOAD_RANGE_MISMATCH";
  /** Marker that survives two copies of the package (ESM + CJS), where `instanceof` fails. */
  readonly [marker] = true;

  constructor(code: ResilienceError["code"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ResilienceError";
    this.code = code;
  }
}

/** True for any error thrown by this package (see {@link ResilienceError}), even across package copies. */
export function isResilienceError(error: unknown): error is ResilienceError {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

/** The subclasses' guards: `code` and `name` read as plain fields, so another copy of the package (ESM + CJS) passes too. */
export function hasCodeAndName(error: unknown, code: ResilienceError["code"], name: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code && (error as { name?: unknown }).name === name;
}
