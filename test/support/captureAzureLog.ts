import { AzureLogger, getLogLevel, setLogLevel, type AzureLogLevel } from "@azure/logger";

/** @azure/logger output being captured; `stop()` puts the previous log sink and level back. */
export interface AzureLogCapture {
  readonly lines: string[];
  stop(): void;
}

/**
 * Sets the @azure/logger level to `level` and captures every line it writes into `lines`
 * (one string per call, formatted by `format`) until `stop()`.
 */
export function captureAzureLog(
  level: AzureLogLevel,
  lines: string[] = [],
  format: (...args: unknown[]) => string = (...args) => args.map(String).join(" "),
): AzureLogCapture {
  const savedLog = AzureLogger.log;
  const savedLevel = getLogLevel();
  AzureLogger.log = (...args: unknown[]) => lines.push(format(...args));
  setLogLevel(level);
  return {
    lines,
    stop() {
      AzureLogger.log = savedLog;
      setLogLevel(savedLevel);
    },
  };
}
