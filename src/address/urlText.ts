/**
 * `decodeURIComponent` that never throws: a malformed escape (`%E0%A4%A`, a lone `%`)
 * leaves the text as it came, because a scope from slightly wrong text beats a crash
 * in the request path.
 */
export function safeDecodeURIComponent(text: string): string {
  // Nothing to decode without a `%`: the common case on every request's hot path.
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The query string of a URL (absolute or relative), without its `?` and without any
 * `#fragment`; `""` when it has none (a `?` inside the fragment starts no query).
 */
export function searchOf(url: string): string {
  const hash = url.indexOf("#");
  const end = hash === -1 ? url.length : hash;
  const question = url.indexOf("?");
  return question === -1 || question > end ? "" : url.slice(question + 1, end);
}

/**
 * One query parameter, percent-decoded. Parsed by hand rather than with
 * URLSearchParams, which would turn a literal `+` in a key into a space.
 */
export function queryParameter(search: string, name: string): string | undefined {
  const query = search.startsWith("?") ? search.slice(1) : search;
  for (const pair of query.split("&")) {
    const equals = pair.indexOf("=");
    const key = safeDecodeURIComponent(equals === -1 ? pair : pair.slice(0, equals));
    if (key === name) return equals === -1 ? "" : safeDecodeURIComponent(pair.slice(equals + 1));
  }
  return undefined;
}
