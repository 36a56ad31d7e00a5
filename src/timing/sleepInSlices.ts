/**
 * Sleeps `delayInMs` through `sleep` (which answers false when the caller aborted). With
 * `letGo`, the sleep is cut into slices of `sliceInMs` and `letGo` is asked between them: a
 * true answer ends it early (`"released"`). The retry loop uses it for backoffs that an
 * opened circuit makes pointless, and `CallerLoad` for circuit waits that starve a bounded
 * caller; without `letGo` it is one sleep, one timer.
 */
export async function sleepInSlices(
  delayInMs: number,
  sleep: (ms: number) => Promise<boolean>,
  letGo: (() => boolean) | undefined,
  sliceInMs: number,
): Promise<"waited" | "aborted" | "released"> {
  for (let left = delayInMs; left > 0; ) {
    const slice = letGo === undefined ? left : Math.min(left, sliceInMs);
    if (!(await sleep(slice))) return "aborted";
    left -= slice;
    if (left > 0 && letGo?.() === true) return "released";
  }
  return "waited";
}
