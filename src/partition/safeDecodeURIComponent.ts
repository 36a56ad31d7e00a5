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
