import type * as PromClient from "prom-client";
import type { Registry, RegistryContentType } from "prom-client";
import { loadOptionalPeer } from "./optionalPeer.js";

/**
 * prom-client's default registry (`register`), loaded on first use so that the package
 * imports without prom-client (an optional peer, needed only by the Prometheus sink).
 * Throws `MissingPeerError` naming `neededFor` when prom-client is not installed.
 */
export function defaultRegistry(neededFor: string): Registry<RegistryContentType> {
  return loadOptionalPeer<typeof PromClient>("prom-client", neededFor).register;
}
