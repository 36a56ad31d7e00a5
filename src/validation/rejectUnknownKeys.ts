/** Throws a `TypeError` naming any key of `options` that is not in `known`: a typo must not pass silently. */
export function rejectUnknownKeys(name: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`${name}.${key} is not a known option; known options are ${known.join(", ")}.`);
    }
  }
}
