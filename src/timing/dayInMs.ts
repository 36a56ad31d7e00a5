/** The longest wait, timeout or deadline any option accepts: one day. */
export const DAY_IN_MS = 24 * 3600_000;
