/** How a sleep ended: waited out, woken early (what it waited for came), let go early by its `letGo`, or aborted by the caller (with the abort error). */
export type SleepEnd =
  | { readonly ended: "waited" }
  | { readonly ended: "woken" }
  | { readonly ended: "released" }
  | { readonly ended: "aborted"; readonly error: unknown };

const WAITED: SleepEnd = Object.freeze({ ended: "waited" });
const WOKEN: SleepEnd = Object.freeze({ ended: "woken" });
export const RELEASED: SleepEnd = Object.freeze({ ended: "released" });

/**
 * Sleeps `delayInMs` through `sleep`, which rejects when the caller aborts and resolves `true` when
 * what the wait was for has come (`"woken"`). With `letGo`, the sleep is cut into slices of
 * `sliceInMs` and `letGo` is asked between them: a true answer ends it early (`"released"`), for
 * waits the caller policy may let go of and backoffs an opened circuit makes pointless. Without
 * `letGo` it is one sleep, one timer.
 */
export async function sleepInSlices(
  delayInMs: number,
  sleep: (ms: number) => Promise<boolean | void>,
  letGo: (() => boolean) | undefined,
  sliceInMs: number,
): Promise<SleepEnd> {
  for (let left = delayInMs; left > 0; ) {
    const slice = letGo === undefined ? left : Math.min(left, sliceInMs);
    try {
      if ((await sleep(slice)) === true) return WOKEN;
    } catch (error) {
      return { ended: "aborted", error };
    }
    left -= slice;
    if (left > 0 && letGo?.() === true) return RELEASED;
  }
  return WAITED;
}
