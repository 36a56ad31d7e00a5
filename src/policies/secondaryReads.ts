// Reads from the secondary region of an RA-GRS / RA-GZRS account (docs/secondary-reads.md):
// which requests may go there and the secondary's URL. The retry loop sends the attempt, as it
// sends the primary's, when decideNext says so (an open circuit, a failed primary attempt).
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { AttemptResult } from "../classification/attemptResult.js";
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

/**
 * Validates `secondaryReads`: `true` or an options object turns it on, `false` and
 * undefined leave it off; anything else (null included) is a TypeError naming it.
 */
export function resolveSecondaryReads(option: unknown, name = "secondaryReads"): SecondaryReadSettings | undefined {
  if (option === undefined || option === false) return undefined;
  return option === true ? { endpoint: undefined } : checkSecondaryReadOptions(option, name);
}

/**
 * Only reads go to the secondary: it serves nothing else, and a write there could not be
 * replicated back. By method first (cheap, at the operation's start); a Queue "Get Messages"
 * is a GET that dequeues (it changes visibility and the pop receipt), so the route also
 * refuses `receive_messages` when it opens (see {@link SecondaryRoute.open}).
 */
export function isSecondaryReadMethod(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** Operations that are GETs but change state: never sent to the secondary. */
const NOT_READS: ReadonlySet<StorageOperation> = new Set<StorageOperation>(["receive_messages"]);

/**
 * One operation's way to the secondary. Made only for a GET or HEAD of a client with
 * `secondaryReads` on. Closed for the rest of the operation once the secondary answered 404:
 * the secondary lags, so its "not found" may be a write not replicated yet, and only the
 * primary may say so (as the storage SDKs do).
 */
export class SecondaryRoute {
  readonly #settings: SecondaryReadSettings;
  #url: string | undefined | null = null;
  #closed = false;
  /** The primary's failure count when the secondary was last read; -1 before. */
  #readAfterFailures = -1;

  constructor(settings: SecondaryReadSettings) {
    this.#settings = settings;
  }

  /**
   * True while a read may go to the secondary now: it has one, the operation is a read (not a
   * dequeue), the secondary has not answered 404 or a permanent failure, and it has not been
   * read since the primary last failed (`primaryFailures`, the primary's failed attempts so
   * far): one secondary read per failure at most, so an operation waiting on an open circuit
   * does not poll the secondary.
   */
  open(address: RequestAddress, primaryFailures: number): boolean {
    if (this.#closed || primaryFailures === this.#readAfterFailures) return false;
    // Derived on first use: an operation that never fails never pays for it.
    if (this.#url === null) this.#url = NOT_READS.has(address.operation) ? undefined : address.secondaryUrl(this.#settings.endpoint);
    return this.#url !== undefined;
  }

  /**
   * Points `request` at the secondary for one attempt (call after `open()`), and returns the
   * primary's URL, which {@link restore} puts back: the operation's address (breaker scope,
   * labels) stays the primary's.
   */
  redirect(request: PipelineRequest, primaryFailures: number): string {
    this.#readAfterFailures = primaryFailures;
    return pointRequestAt(request, this.#url as string);
  }

  /** Puts the primary's URL back on `request`, whatever the attempt did. */
  restore(request: PipelineRequest, primaryUrl: string): void {
    pointRequestAt(request, primaryUrl);
  }

  /**
   * Learns from the secondary's answer. A 404 may be a write not replicated yet; a permanent
   * failure (403 on a GRS account without read access, a wrong endpoint) will not change
   * within the operation: the primary alone goes on.
   */
  learn(result: AttemptResult): void {
    if (result.outcomeClass === "permanent" || result.status === 404 || (result.error as { statusCode?: unknown } | undefined)?.statusCode === 404) {
      this.#closed = true;
    }
  }
}
