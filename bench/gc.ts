import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let collect: (() => void) | undefined;

/**
 * A full garbage collection, so heap figures mean live objects. Uses `global.gc` when Node
 * was started with `--expose-gc`, else turns the flag on at run time (works under vitest too).
 */
export function fullGc(): void {
  if (collect === undefined) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === "function") collect = exposed;
    else {
      setFlagsFromString("--expose-gc");
      collect = runInNewContext("gc") as () => void;
    }
  }
  collect();
  collect();
}

/** Heap in use after a full collection, in MB with one decimal. */
export function heapUsedInMb(): number {
  fullGc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
}
