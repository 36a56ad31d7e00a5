/** What {@link safeErrorCode} writes in place of a value that does not look like an error code. */
export const UNRECOGNISED_ERROR_CODE = "<unrecognised>";

/** Longest value taken as an error code: Azure's are under 50 characters (`AuthorizationPermissionMismatch`). */
export const MAX_ERROR_CODE_LENGTH = 64;

const ERROR_CODE = /^[A-Za-z0-9._-]+$/;

/**
 * A server-sent (or caller-supplied) code made safe for logs, metric labels and error
 * messages: `x-ms-error-code` values (`ServerBusy`), Node codes (`ECONNRESET`) and error
 * names (`RestError`) pass as they are; anything longer than {@link MAX_ERROR_CODE_LENGTH}
 * or with other characters becomes {@link UNRECOGNISED_ERROR_CODE}, because a hostile or
 * broken endpoint can echo request credentials (a SAS signature, a key) into its headers.
 * Undefined stays undefined (no code is not an unrecognised code). Pure.
 */
export function safeErrorCode(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" && value.length <= MAX_ERROR_CODE_LENGTH && ERROR_CODE.test(value) ? value : UNRECOGNISED_ERROR_CODE;
}

/** A thrown value's class name (`AbortError`, `RestError`) made safe as {@link safeErrorCode} makes a code, never its message; `error` without one. */
export function safeErrorName(error: unknown): string {
  return safeErrorCode((error as { name?: unknown } | null | undefined)?.name) ?? "error";
}
