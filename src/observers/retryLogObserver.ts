import type { RequestAddress } from "../address/requestAddress.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { RetryObserver } from "./retryEvents.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import { choiceOption, optionsObject, type OptionsShape } from "../validation/optionSchema.js";

const checkOptions = optionsObject(
  { service: choiceOption(STORAGE_SERVICES) } satisfies OptionsShape<RetryLogObserverOptions>,
  { root: "createRetryLogObserver options", owner: "createRetryLogObserver" },
);

/**
 * Options of {@link createRetryLogObserver}: `service`, the service the requests go to,
 * detected from each request's host when omitted (Azurite's path-style URLs name none).
 */
export type RetryLogObserverOptions = Parameters<typeof createRetryLogObserver>[0];

/**
 * A {@link RetryObserver} that logs through `@azure/logger` (namespace
 * `azure:storage-resilience`), at `info`, so `AZURE_LOG_LEVEL=info` shows it:
 *
 * - each retry: `operation`, `scope`, `attempt` (the one that failed), `class`, its `status`
 *   and `errorCode`, `delayInMs` and `delaySource`;
 * - the end of an operation that was retried or failed: `attempts`, `stopReason`,
 *   `finalClass`, `elapsedInMs`.
 *
 * It never logs URLs, query strings (SAS signatures), headers or bodies: the operation is
 * a fixed name and the scope is `service|account|container-or-table-or-queue|partition`,
 * read from the path. The server's `errorCode` is logged only when it looks like one
 * (`safeErrorCode`), else as `<unrecognised>`. `installResilience` adds one to every installation; add it yourself
 * when you put `resilientRetryPolicy` in a pipeline by hand.
 */
export function createRetryLogObserver(options: { service?: StorageService } = {}): RetryObserver {
  const { service } = checkOptions(options, "");
  return {
    onRetry(event) {
      if (!logger.info.enabled) return;
      logger.info(
        `Retrying: ${formatLogFields({
          ...describe(event.address.under(service)),
          attempt: event.attempt,
          class: event.reason,
          status: event.status,
          errorCode: safeErrorCode(event.errorCode),
          delayInMs: event.delayInMs,
          delaySource: event.delaySource,
        })}`,
      );
    },
    onOperationEnd(event) {
      // An operation that succeeded at once is not worth a line.
      if (!logger.info.enabled || (event.attempts <= 1 && event.stopReason === "success")) return;
      logger.info(
        `Operation ended: ${formatLogFields({
          ...describe(event.address.under(service)),
          attempts: event.attempts,
          stopReason: event.stopReason,
          finalClass: event.finalClass,
          elapsedInMs: event.elapsedInMs,
        })}`,
      );
    },
  };
}

/** The operation's fixed name and the partition scope, from method and path only. */
function describe(address: RequestAddress): { operation: string; scope: string | undefined } {
  return { operation: address.operation, scope: address.scopeKey };
}

/** Longest value written; longer ones (a long blob name) are cut and end in `...`. */
export const MAX_LOG_VALUE_CHARS = 200;

const BARE_VALUE = /^[A-Za-z0-9_.:/@+-]+$/;

/**
 * Formats fields as `key=value` pairs, in order, undefined ones left out: `operation=upload_blob attempt=1`.
 * Values with spaces, quotes, `=`, `|` or control characters are JSON-quoted, so a blob name
 * or PartitionKey cannot forge another field or a second log line. Pure.
 */
export function formatLogFields(fields: Readonly<Record<string, string | number | undefined>>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    parts.push(`${key}=${formatValue(value)}`);
  }
  return parts.join(" ");
}

function formatValue(value: string | number): string {
  if (typeof value === "number") return Number.isFinite(value) ? String(Math.round(value)) : String(value);
  const cut = value.length > MAX_LOG_VALUE_CHARS ? `${value.slice(0, MAX_LOG_VALUE_CHARS)}...` : value;
  return BARE_VALUE.test(cut) ? cut : JSON.stringify(cut);
}
