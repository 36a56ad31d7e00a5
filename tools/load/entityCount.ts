/** One inner request line of a Tables `$batch` body, e.g. `POST http://host/acct/t HTTP/1.1`. */
const BATCH_REQUEST_LINE = /^(?:GET|POST|PUT|MERGE|PATCH|DELETE) \S+ HTTP\/1\.1\r?$/gm;

/**
 * How many entities a Tables request touches, for the per-partition entities/s target:
 * the number of operations in a `$batch` body, otherwise 1.
 */
export function entityCount(path: string, body: string | undefined): number {
  if (!/\/\$batch(?:\?|$)/.test(path) || body === undefined) return 1;
  const inner = body.match(BATCH_REQUEST_LINE)?.length ?? 0;
  return Math.max(1, inner);
}
