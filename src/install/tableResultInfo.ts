// Links a Tables client's results to their operation's RetryInfo, so that getRetryInfo(result)
// answers on a success too. Needed because `@azure/data-tables` builds every result afresh with
// no link back to the request or response the retry policy marked: `getEntity` answers
// `deserialize(parsedBody)`, a write its parsed headers spread into a new object, a transaction
// an object of its own. So the install wraps the client instance's operation methods: each call
// hears its raw response through the SDK's own `onResponse` option, and marks the result.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Pipeline, PipelinePolicy, PipelineRequest, PipelineResponse } from "@azure/core-rest-pipeline";
import { getRetryInfo } from "../policies/retryInfo.js";
import { attachRetryInfoHidden } from "../address/requestMarks.js";

/**
 * Operations whose result is an object, and the index of their options argument; checked
 * against `@azure/data-tables` 13.3 (TableClient, then TableServiceClient). `createTable`
 * and `deleteTable` answer `undefined`: nothing to mark.
 */
const OPTIONS_INDEX: Readonly<Record<string, number>> = {
  getEntity: 2,
  createEntity: 1,
  upsertEntity: 2,
  updateEntity: 2,
  deleteEntity: 2,
  getAccessPolicy: 0,
  setAccessPolicy: 1,
  getProperties: 0,
  setProperties: 1,
  getStatistics: 0,
};

/** The name of the policy that hands a transaction's request to its call. */
export const tableTransactionLinkPolicyName = "azureStorageResilienceTableTransactionLink";

type AnyMethod = (this: unknown, ...args: unknown[]) => unknown;
type OnResponse = (this: unknown, raw: PipelineResponse, flat: unknown) => void;
interface TransactionSlot {
  request?: PipelineRequest;
}

// `submitTransaction` sends its `$batch` with `sendRequest`, which never calls `onResponse`,
// and awaits other work before it: only the async context ties the request to its call.
// Created on the first transaction. Only where AsyncLocalStorage runs on async context frames
// (Node 24 on): on Node 22 an AsyncLocalStorage in use turns on promise hooks for the whole
// process, a cost no user should pay for a diagnostic; there a transaction's result has no
// record (its error still has one), as docs/troubleshooting.md says.
const TRANSACTIONS_LINKED = Number(process.versions.node.split(".")[0]) >= 24;
let transactionContext: AsyncLocalStorage<TransactionSlot> | undefined;

/**
 * Wraps `client`'s Tables operations (own properties, over the class's methods) so their
 * results carry the RetryInfo, and adds the policy `submitTransaction` needs to `pipeline`.
 * Methods the SDK version lacks are skipped. Answers the function that undoes all of it.
 */
export function linkTableResults(client: unknown, pipeline: Pipeline): () => void {
  if (typeof client !== "object" || client === null) return () => undefined;
  const target = client as Record<string, unknown>;
  const restores: (() => void)[] = [];
  for (const [name, optionsIndex] of Object.entries(OPTIONS_INDEX)) {
    wrapMethod(target, name, (original) => withResultInfo(original, optionsIndex), restores);
  }
  wrapMethod(target, "listEntities", withPageInfo, restores);
  if (TRANSACTIONS_LINKED && wrapMethod(target, "submitTransaction", withTransactionInfo, restores)) {
    pipeline.addPolicy(transactionLinkPolicy());
    restores.push(() => pipeline.removePolicy({ name: tableTransactionLinkPolicyName }));
  }
  return () => {
    for (const restore of restores.splice(0)) restore();
  };
}

/** Replaces `target[name]` by `wrap(original)` when it is a function; true when it did. */
function wrapMethod(target: Record<string, unknown>, name: string, wrap: (original: AnyMethod) => AnyMethod, restores: (() => void)[]): boolean {
  const original = target[name];
  if (typeof original !== "function") return false;
  const own = Object.getOwnPropertyDescriptor(target, name);
  const wrapper = wrap(original as AnyMethod);
  Object.defineProperty(target, name, { value: wrapper, configurable: true, writable: true, enumerable: false });
  restores.push(() => {
    // Someone replaced the method after us: theirs stays.
    if (target[name] !== wrapper) return;
    if (own === undefined) delete target[name];
    else Object.defineProperty(target, name, own);
  });
  return true;
}

/** The method, with an `onResponse` of ours in a copy of its options, marking the result with the response's record. */
function withResultInfo(original: AnyMethod, optionsIndex: number): AnyMethod {
  return function (this: unknown, ...args: unknown[]): unknown {
    const options = args[optionsIndex];
    // Not an options object: the SDK's own answer to it, untouched.
    if (options !== undefined && (typeof options !== "object" || options === null)) return original.apply(this, args);
    let raw: PipelineResponse | undefined;
    args[optionsIndex] = withOnResponse(options as object | undefined, (response) => (raw = response));
    const pending = original.apply(this, args);
    if (!isPromise(pending)) return pending;
    return pending.then((result) => {
      markResult(result, raw);
      return result;
    });
  };
}

/** `listEntities` whose `byPage()` pages carry each page's record; the entity-by-entity iteration is the SDK's. */
function withPageInfo(original: AnyMethod): AnyMethod {
  return function (this: unknown, ...args: unknown[]): unknown {
    const iterator = original.apply(this, args) as { byPage?: unknown } | undefined;
    const options = args[0];
    if (typeof iterator?.byPage !== "function" || (options !== undefined && (typeof options !== "object" || options === null))) return iterator;
    // A listing of its own per byPage() call, so two page iterators never share a response.
    iterator.byPage = (settings?: unknown): AsyncIterableIterator<unknown> => {
      let raw: PipelineResponse | undefined;
      const listing = original.call(this, withOnResponse(options as object | undefined, (response) => (raw = response))) as {
        byPage(settings?: unknown): AsyncIterableIterator<unknown>;
      };
      return markPages(listing.byPage(settings), () => raw);
    };
    return iterator;
  };
}

async function* markPages(pages: AsyncIterableIterator<unknown>, lastResponse: () => PipelineResponse | undefined): AsyncIterableIterator<unknown> {
  for await (const page of pages) {
    markResult(page, lastResponse());
    yield page;
  }
}

/** `submitTransaction`, run in a context where the link policy leaves its `$batch` request. */
function withTransactionInfo(original: AnyMethod): AnyMethod {
  return function (this: unknown, ...args: unknown[]): unknown {
    transactionContext ??= new AsyncLocalStorage<TransactionSlot>();
    const slot: TransactionSlot = {};
    const pending = transactionContext.run(slot, () => original.apply(this, args));
    if (!isPromise(pending)) return pending;
    return pending.then((result) => {
      markResult(result, slot.request);
      return result;
    });
  };
}

/** Before the retry policy: gives the first request of a transaction's call to its slot. */
function transactionLinkPolicy(): PipelinePolicy {
  return {
    name: tableTransactionLinkPolicyName,
    sendRequest(request, next) {
      const slot = transactionContext?.getStore();
      if (slot !== undefined && slot.request === undefined) slot.request = request;
      return next(request);
    },
  };
}

/** A copy of the user's options whose `onResponse` tells `hear` first, then calls theirs; theirs are never changed. */
function withOnResponse(options: object | undefined, hear: (response: PipelineResponse) => void): object {
  const users = (options as { onResponse?: unknown } | undefined)?.onResponse;
  return {
    ...options,
    onResponse(this: unknown, response: PipelineResponse, flat: unknown): void {
      hear(response);
      if (typeof users === "function") (users as OnResponse).call(this, response, flat);
    },
  };
}

function markResult(result: unknown, source: PipelineResponse | PipelineRequest | undefined): void {
  if (source === undefined || typeof result !== "object" || result === null || !Object.isExtensible(result)) return;
  const info = getRetryInfo(source);
  if (info !== undefined) attachRetryInfoHidden(result, info);
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
