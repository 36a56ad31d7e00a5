import type { PipelineResponse } from "@azure/core-rest-pipeline";
import type { OutcomeClass } from "./outcomeClass.js";

/** One attempt's result as the retry loop sees it: what came back, and its class. */
export interface AttemptResult {
  response?: PipelineResponse;
  error?: unknown;
  status?: number;
  errorCode?: string;
  outcomeClass: OutcomeClass;
  /**
   * `status` and `errorCode` are those of a failed changeset inside a Tables `$batch`
   * answered 202 (see `failedChangeset`); the transaction applied nothing.
   */
  inChangeset?: boolean;
  /**
   * A write answered 2xx whose JSON body does not parse: the service says the write applied,
   * but the SDK's deserializer (after the retry policy) will throw `PARSE_ERROR` on it.
   */
  unreadableBody?: boolean;
  /** The server's retry hint when the response's own headers do not carry it (a failed changeset's). */
  retryAfterInMs?: number;
}
