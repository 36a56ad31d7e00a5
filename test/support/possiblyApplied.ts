import { getRetryInfo } from "../../src/index.js";

/**
 * The tests' shorthand for `getRetryInfo(source)?.possiblyApplied === true`, the check
 * docs/data-safety.md gives users (the package no longer exports a second way to ask it).
 */
export function isPossiblyApplied(source: unknown): boolean {
  return getRetryInfo(source)?.possiblyApplied === true;
}
