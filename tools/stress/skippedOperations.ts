import type { StepStats } from "./stressStats.js";

// Operations the load generator did not send: what the "skipped" column counts, and when it
// limits what a step measured. Said once, for the terminal, the report and the help.

/** Most operations in flight; an operation that falls due past it is skipped: more would only measure the client's own queue. */
export const MAX_IN_FLIGHT = 256;

/**
 * The share of a step's operations skipped from which its achieved rate measures the load generator:
 * a step that could not send a twentieth of what it asked offered the partition visibly less than
 * its rate, so a shortfall is at least partly the generator's, not the account's.
 */
export const MATERIAL_SKIPPED_SHARE = 0.05;

/** What the "skipped" column counts, in one sentence. */
export const SKIPPED_MEANING =
  `"skipped" counts operations not sent: each fell due while the load generator already had its maximum of ${MAX_IN_FLIGHT} ` +
  "operations in flight (an operation waiting out throttling and its retries stays in flight until it ends).";

/**
 * One sentence per step whose skipped share is material (at least {@link MATERIAL_SKIPPED_SHARE}),
 * saying that its achieved rate measures the load generator, not the account; none when no step's is. Pure.
 */
export function generatorLimits(steps: readonly StepStats[]): string[] {
  return steps
    .filter((s) => s.operations > 0 && s.skipped / s.operations >= MATERIAL_SKIPPED_SHARE)
    .map((s) => {
      const share = Math.round((s.skipped / s.operations) * 100);
      const latency = s.p50InMs === null ? "" : ` (operations took ${s.p50InMs} ms at p50, retries included)`;
      return (
        `Step ${s.step} skipped ${n(s.skipped)} of ${n(s.operations)} operations (${share} %): its ${s.percentOfTarget} % of target ` +
        `measures this load generator, which had ${MAX_IN_FLIGHT} operations in flight${latency}, not the account.`
      );
    });
}

function n(value: number): string {
  return value.toLocaleString("en-US");
}
