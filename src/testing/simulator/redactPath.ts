/**
 * Query parameters of a Shared Access Signature. `sig` is the secret; the rest are
 * removed too, because with it they describe the grant (and together can replay it).
 */
const SAS_PARAMETERS = new Set([
  "sig", "sv", "ss", "srt", "sp", "se", "st", "spr", "si", "sr", "sdd", "sip", "ses",
  "skoid", "sktid", "skt", "ske", "sks", "skv", "saoid", "suoid", "scid",
  "tn", "spk", "srk", "epk", "erk", "rscc", "rscd", "rsce", "rscl", "rsct",
]);

/**
 * A request's path and query with SAS parameters removed, safe to record or print.
 * Other parameters are kept as sent, because they say which operation it was.
 */
export function redactPath(pathAndQuery: string): string {
  const question = pathAndQuery.indexOf("?");
  if (question === -1) return pathAndQuery;
  const kept = pathAndQuery
    .slice(question + 1)
    .split("&")
    .filter((pair) => pair !== "" && !SAS_PARAMETERS.has(parameterName(pair)));
  const path = pathAndQuery.slice(0, question);
  return kept.length === 0 ? path : `${path}?${kept.join("&")}`;
}

function parameterName(pair: string): string {
  const equals = pair.indexOf("=");
  const raw = equals === -1 ? pair : pair.slice(0, equals);
  try {
    return decodeURIComponent(raw).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}
