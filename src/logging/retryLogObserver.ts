import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { storageOperationName } from "../metrics/storageOperation.js";
import { detectServiceFromUrl } from "../partition/detectServiceFromUrl.js";
import { requestScopeKey } from "../partition/requestScopeKey.js";
import { STORAGE_SERVICES, type StorageService } from "../partition/partitionScope.js";
import { recordFirstTrySuccess, type FirstTrySuccessRecorder } from "../policies/firstTrySuccess.js";
import type { RetryObserver } from "../policies/retryEvents.js";
import { formatLogFields } from "./formatLogFields.js";
import { logger } from "./logger.js";
import { safeErrorCode } from "./safeErrorCode.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";

/** Options of {@link createRetryLogObserver}. */
export interface RetryLogObserverOptions {
  /** The service the requests go to; detected from each request's host when omitted (Azurite's path-style URLs name none). */
  service?: StorageService;
}

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
export function createRetryLogObserver(options: RetryLogObserverOptions = {}): RetryObserver {
  validateObjectOption("createRetryLogObserver options", options);
  rejectUnknownKeys("createRetryLogObserver options", options, ["service"]);
  const service = options.service === undefined ? undefined : validateChoiceOption("service", options.service, STORAGE_SERVICES);
  const observer: RetryObserver & FirstTrySuccessRecorder = {
    // An operation that succeeded on its first attempt is not logged: saying so spares the
    // retry policy building an end event for it.
    [recordFirstTrySuccess]() {},
    onRetry(event) {
      if (!logger.info.enabled) return;
      const fields = describeRequest(event.request, service);
      logger.info(
        `Retrying: ${formatLogFields({
          ...fields,
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
      if (!logger.info.enabled || (event.attempts <= 1 && event.stopReason === "success")) return;
      logger.info(
        `Operation ended: ${formatLogFields({
          ...describeRequest(event.request, service),
          attempts: event.attempts,
          stopReason: event.stopReason,
          finalClass: event.finalClass,
          elapsedInMs: event.elapsedInMs,
        })}`,
      );
    },
  };
  return observer;
}

/** The operation's fixed name and the partition scope, from method and path only. */
function describeRequest(request: PipelineRequest, service: StorageService | undefined): { operation: string; scope: string | undefined } {
  const resolved = service ?? detectServiceFromUrl(request.url);
  return {
    operation: resolved === undefined ? "other" : storageOperationName(resolved, request),
    scope: requestScopeKey(request, resolved)?.key,
  };
}
