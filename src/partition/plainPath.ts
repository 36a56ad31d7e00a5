/**
 * Where a URL's path that starts at `from` ends (at `?`, `#` or the URL's end), when the
 * URL parser would leave it exactly as written: printable ASCII outside the parser's
 * percent-encode set (none of `"`, `<`, `>`, `\`, `^`, backtick, `{`, `|`, `}`), no dot
 * segment, plain or `%2e`; -1 otherwise. Its segments still need percent-decoding.
 * (`parseAccountAndPath` skips the URL parser for such a path.)
 */
export function plainPathEnd(url: string, from: number): number {
  return pathEnd(NOT_PLAIN, url, from);
}

/**
 * {@link plainPathEnd} for a path that also needs no decoding: no `%` at all. (The
 * partition scope's fast path reads keys from such a path as they are written.)
 */
export function undecodedPathEnd(url: string, from: number): number {
  return pathEnd(NOT_PLAIN_OR_PERCENT, url, from);
}

// A regular expression scans faster than a charCodeAt loop. Each matches the first thing a
// plain path may not hold, or its end (`?`, `#`): anything but the characters listed, the
// `/` of a dot segment, and (percent allowed) an encoded dot.
const NOT_PLAIN = /[^!$-;=@-[\]_a-z~]|\/(?=\.)|%2[eE]/g;
const NOT_PLAIN_OR_PERCENT = /[^!$&-;=@-[\]_a-z~]|\/(?=\.)/g;

function pathEnd(notPlain: RegExp, url: string, from: number): number {
  notPlain.lastIndex = from;
  if (!notPlain.test(url)) return url.length;
  // A `%2e` match ends on its `e`: neither `?` nor `#`, so it refuses the path like any other match.
  const end = notPlain.lastIndex - 1;
  const c = url.charCodeAt(end);
  return c === 0x3f || c === 0x23 ? end : -1; // "?", "#"
}
