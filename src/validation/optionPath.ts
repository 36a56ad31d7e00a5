/**
 * The dotted path of `key` under `parent`, as the user wrote it (`retry` + `maxRetries` is
 * `retry.maxRetries`); a factory's own options have no parent (`""`), so their path is the key.
 */
export function optionPath(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}
