import { createRequire } from "node:module";
import type * as PromClient from "prom-client";
import type { Registry, RegistryContentType } from "prom-client";

/** The optional peer dependencies the metrics sinks load on first use. */
export type OptionalPeer = "prom-client" | "@opentelemetry/api";

/** Thrown when a sink is asked for and its peer is not installed; `code` says which. */
class MissingPeerError extends Error {
  readonly code = "MISSING_PEER";
  readonly peer: OptionalPeer;

  constructor(peer: OptionalPeer, neededFor: string, cause: unknown) {
    super(`${neededFor} needs ${peer}, which is not installed here: npm install ${peer}`, { cause });
    this.name = "MissingPeerError";
    this.peer = peer;
  }
}

// Loaded with require, not a top-level import, so importing the package works without the peer:
// prom-client is CommonJS only, and @opentelemetry/api keeps its state on globalThis, so the
// copy require finds is the one an ESM import would share. tsup shims import.meta.url in the CJS build.
const requirePeer = createRequire(import.meta.url);
const loaded = new Map<OptionalPeer, unknown>();

/** Loads `peer` once; a missing peer throws {@link MissingPeerError} naming what needed it. */
export function loadOptionalPeer<T>(peer: OptionalPeer, neededFor: string): T {
  if (loaded.has(peer)) return loaded.get(peer) as T;
  let module: unknown;
  try {
    module = requirePeer(peer);
  } catch (error) {
    if (isNotFound(error, peer)) throw new MissingPeerError(peer, neededFor, error);
    throw error;
  }
  loaded.set(peer, module);
  return module as T;
}

/** Whether `peer` is installed here, without loading it (for a sink that loads it only when first needed). */
export function isPeerResolvable(peer: OptionalPeer): boolean {
  if (loaded.has(peer)) return true;
  try {
    requirePeer.resolve(peer);
    return true;
  } catch {
    return false;
  }
}

/** Whether `peer` can be loaded here (loading it if so). */
export function isPeerInstalled(peer: OptionalPeer): boolean {
  try {
    loadOptionalPeer(peer, "a check");
    return true;
  } catch (error) {
    if (error instanceof MissingPeerError) return false;
    throw error;
  }
}

/** Not found: the peer itself is missing (a broken peer that cannot find its own dependency is rethrown). */
function isNotFound(error: unknown, peer: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "MODULE_NOT_FOUND" && typeof message === "string" && message.includes(`'${peer}'`);
}

/** prom-client's default registry (`register`), loaded on first use (see {@link loadOptionalPeer}). */
export function defaultRegistry(neededFor: string): Registry<RegistryContentType> {
  return loadOptionalPeer<typeof PromClient>("prom-client", neededFor).register;
}
