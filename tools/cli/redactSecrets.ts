import { DEVSTORE_ACCOUNT_KEY } from "azure-storage-resilience/testing";

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/(AccountKey=)[^;]*/gi, "$1<redacted>"],
  [/(SharedAccessSignature=)[^;]*/gi, "$1<redacted>"],
  [/([?&](?:sig|se|sv|sp|st|spr|srt|ss|skoid|sktid|skt|ske|sks|skv|sr|si)=)[^&\s"']*/gi, "$1<redacted>"],
  [/(Authorization:?\s*)(SharedKey(?:Lite)?|Bearer)\s+\S+/gi, "$1$2 <redacted>"],
];

/**
 * Removes what could be a credential from text the CLI prints: account keys and SAS
 * tokens in connection strings and URLs, Authorization headers, and Azurite's well-known
 * key. Pure.
 */
export function redactSecrets(text: string, extraSecrets: readonly string[] = []): string {
  let redacted = text;
  for (const secret of [DEVSTORE_ACCOUNT_KEY, ...extraSecrets]) {
    if (secret.length >= 8) redacted = redacted.split(secret).join("<redacted>");
  }
  for (const [pattern, replacement] of PATTERNS) redacted = redacted.replace(pattern, replacement);
  return redacted;
}
