// Reads from the secondary region of an RA-GRS / RA-GZRS account (docs/secondary-reads.md): which
// requests may go there, and where. The retry loop sends the attempt when decideNext says so.
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { AttemptClass } from "../observers/retryEvents.js";
import type { DecisionFacts } from "./decisionFacts.js";
import type { RetryInfo } from "./retryInfo.js";
import type { RequestAddress } from "../address/requestAddress.js";
import type { StorageOperation } from "../address/storageOperation.js";
import { parseSecondaryEndpoint } from "../address/secondaryUrl.js";
import { pointRequestAt } from "../address/requestMarks.js";
import { optionsObject, type OptionsShape } from "../validation/optionSchema.js";

/** Options of `secondaryReads`: where the secondary is (documented on the option). */
export interface SecondaryReadOptions {
  endpoint?: string;
}

/** `secondaryReads` after validation: the endpoint given, or undefined to derive it from each request's URL. */
export interface SecondaryReadSettings {
  readonly endpoint: string | undefined;
}

const checkSecondaryReadOptions = optionsObject(
  { endpoint: (value, path) => (value === undefined ? undefined : parseSecondaryEndpoint(path, value)) } satisfies OptionsShape<SecondaryReadOptions>,
  { expected: "a boolean or an options object ({ endpoint })" },
);

/** Validates `secondaryReads`: `true` or an options object turns it on, `false` and undefined leave it off. */
export function resolveSecondaryReads(option: unknown, name = "secondaryReads"): SecondaryReadSettings | undefined {
  if (option === undefined || option === false) return undefined;
  return option === true ? { endpoint: undefined } : checkSecondaryReadOptions(option, name);
}

/**
 * Only reads go to the secondary: it serves nothing else, and a write there could not be
 * replicated back. By method first (cheap, at the operation's start); a Queue "Get Messages"
 * is a GET that dequeues (it changes visibility and the pop receipt), so the route also
 * refuses `receive_messages` (see {@link SecondaryRoute.readFacts}).
 */
export function isSecondaryReadMethod(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** Operations that are GETs but change state: never sent to the secondary. */
const NOT_READS: ReadonlySet<StorageOperation> = new Set<StorageOperation>(["receive_messages"]);

/**
 * One operation's way to the secondary, and what it knows of it: made only for a GET or HEAD of a
 * client with `secondaryReads` on. It decides nothing: decideNext reads its facts ({@link readFacts})
 * and says when the read goes.
 */
export class SecondaryRoute {
  readonly #settings: SecondaryReadSettings;
  #url: string | undefined | null = null;
  #primaryUrl = "";
  #answer: AttemptClass | "not-found" | undefined;
  /** The primary's failure count when the secondary was last read; -1 before. */
  #readAfterFailures = -1;

  constructor(settings: SecondaryReadSettings) {
    this.#settings = settings;
  }

  /**
   * Writes its facts into `f`: whether the read can go there (not a dequeue, and a secondary URL,
   * derived on first ask), its last answer (`not-found` for a 404), and whether it was read after
   * the primary's `primaryFailures`-th failure. Returns whether it can be read.
   */
  readFacts(f: DecisionFacts, address: RequestAddress, primaryFailures: number): boolean {
    // Derived on first use: an operation that never fails never pays for it.
    if (this.#url === null) this.#url = NOT_READS.has(address.operation) ? undefined : address.secondaryUrl(this.#settings.endpoint);
    f.secondaryReadable = this.#url !== undefined;
    f.secondaryAnswer = this.#answer;
    f.secondaryReadSinceFailure = primaryFailures === this.#readAfterFailures;
    return f.secondaryReadable;
  }

  /**
   * Points `request` at the secondary for one attempt (call after `readFacts()`); {@link restore}
   * puts the primary's URL back: the operation's address (breaker scope, labels) stays the primary's.
   */
  redirect(request: PipelineRequest, primaryFailures: number): void {
    this.#readAfterFailures = primaryFailures;
    this.#primaryUrl = pointRequestAt(request, this.#url as string);
  }

  /** Puts the primary's URL back on `request`, whatever the attempt did. */
  restore(request: PipelineRequest): void {
    pointRequestAt(request, this.#primaryUrl);
  }

  /**
   * Records the secondary's answer in `info` and here (a failed 404, as a response or as an
   * error, is `not-found`), and returns it. A failed answer's body is drained: nobody reads it.
   */
  learn(result: AttemptResult, info: RetryInfo): AttemptClass | "not-found" {
    info.secondaryAttempts = (info.secondaryAttempts ?? 0) + 1;
    if (result.outcomeClass === "success") {
      info.answeredBySecondary = true;
      return (this.#answer = "success");
    }
    result.response?.readableStreamBody?.resume();
    const notFound = result.status === 404 || (result.error as { statusCode?: unknown } | undefined)?.statusCode === 404;
    return (this.#answer = notFound ? "not-found" : result.outcomeClass);
  }
}
