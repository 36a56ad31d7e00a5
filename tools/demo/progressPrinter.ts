import { formatProgressLine, formatProgressTable, ratesBetween, type ProgressSnapshot } from "./progress.js";

/** A stream the printer writes to: stdout or stderr. */
export interface ProgressStream {
  write(text: string): boolean;
  isTTY?: boolean;
}

/** Redraw interval on a terminal. */
const TTY_INTERVAL_IN_MS = 500;
/** One plain line this often otherwise. */
const PLAIN_INTERVAL_IN_MS = 2_000;

/**
 * Shows the run's progress: a live table redrawn in place on a terminal, plain periodic
 * lines otherwise (CI logs, pipes). `stop()` draws the last state and stops the timer.
 */
export function startProgress(stream: ProgressStream, read: () => ProgressSnapshot): { stop(): void } {
  const tty = stream.isTTY === true;
  let previous: ProgressSnapshot | undefined;
  let drawnLines = 0;
  const draw = () => {
    const snapshot = read();
    if (tty) {
      const lines = formatProgressTable(snapshot, ratesBetween(previous, snapshot));
      // Move up over the previous table and clear it, then draw the new one.
      const rewind = drawnLines > 0 ? `\x1b[${drawnLines}A\x1b[J` : "";
      stream.write(`${rewind}${lines.join("\n")}\n`);
      drawnLines = lines.length;
    } else {
      stream.write(`${formatProgressLine(snapshot)}\n`);
    }
    previous = snapshot;
  };
  const timer = setInterval(draw, tty ? TTY_INTERVAL_IN_MS : PLAIN_INTERVAL_IN_MS);
  timer.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      draw();
    },
  };
}
