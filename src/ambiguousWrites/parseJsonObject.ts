/** A JSON object body, or undefined for anything else (empty, truncated, an array, too large). */
export function parseJsonObject(text: string | undefined, maxLength = 8 * 1024 * 1024): Record<string, unknown> | undefined {
  if (text === undefined || text === "" || text.length > maxLength) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
