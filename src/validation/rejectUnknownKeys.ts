import { optionPath } from "./optionPath.js";

/**
 * Throws a `TypeError` naming any key of `options` that is not in `known`, by its full path
 * under `name` (`""` for a factory's own options), and as `owner`'s when given: a typo must
 * not pass silently.
 */
export function rejectUnknownKeys(name: string, options: object, known: readonly string[], owner?: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const of = owner === undefined ? "" : ` of ${owner}`;
      throw new TypeError(`${optionPath(name, key)} is not a known option${of}; known options are ${known.join(", ")}.`);
    }
  }
}
