/** The part of `HttpHeaders` this module reads. */
export interface HeaderSource {
  get(name: string): string | undefined;
}

/** Headers that carry a wait in milliseconds (Azure's own and the core pipeline's). */
const MILLISECOND_HEADERS = ["retry-after-ms", "x-ms-retry-after-ms"] as const;

/**
 * The server's requested wait in milliseconds, from `retry-after-ms`, `x-ms-retry-after-ms`
 * or `Retry-After` (delta-seconds or an HTTP date). When several are present and disagree,
 * the longest valid one wins (the server asked for at least that). Negative, non-numeric or
 * unparsable values are ignored; a date in the past means 0. Returns undefined when there is
 * no valid hint. The caller caps the result: a server can send anything.
 */
export function parseRetryAfterInMs(headers: HeaderSource, now: number = Date.now()): number | undefined {
  let longest: number | undefined;
  const consider = (value: number | undefined): void => {
    if (value !== undefined && (longest === undefined || value > longest)) longest = value;
  };
  for (const name of MILLISECOND_HEADERS) consider(parseNonNegativeNumber(headers.get(name)));
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== undefined) {
    const seconds = parseNonNegativeNumber(retryAfter);
    consider(seconds !== undefined ? seconds * 1000 : parseHttpDate(retryAfter, now));
  }
  return longest;
}

function parseNonNegativeNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  // Number("") is 0 and Number("0x10") is 16: accept plain decimals only.
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

function parseHttpDate(text: string, now: number): number | undefined {
  // An HTTP date has letters and a comma or spaces; Date.parse alone accepts too much ("1").
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
