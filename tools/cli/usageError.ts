/** A bad command line: the CLI prints the message and exits with {@link USAGE_EXIT_CODE}. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The flag at fault, e.g. `"--duration"`, when one is. */
  readonly flag: string | undefined;

  constructor(message: string, flag?: string) {
    super(message);
    this.flag = flag;
  }
}

/** Exit code for a bad command line (as in most Unix tools). */
export const USAGE_EXIT_CODE = 2;

/** Type guard that survives two copies of the module (ESM and CJS), unlike instanceof. */
export function isUsageError(error: unknown): error is UsageError {
  return (error as { name?: unknown } | null)?.name === "UsageError";
}
