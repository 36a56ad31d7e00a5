/**
 * A JSON number with the text it was written as. Tables JSON tells Edm.Int32 from an
 * unannotated Edm.Double by that text alone: the service and Azurite send a whole-number
 * Double as `5.0`, which `JSON.parse` turns into the same `5` as an Int32.
 */
export class JsonNumberLiteral {
  /**
   * @param value - The number.
   * @param source - Its text in the JSON (`"5.0"`, `"1e+21"`); undefined where the engine
   * does not give it to a reviver (Node 22 and later do).
   */
  constructor(
    readonly value: number,
    readonly source: string | undefined,
  ) {}
}

/** What a JSON.parse reviver gets as its third argument where the engine supports it. */
interface ReviverContext {
  source?: string;
}

/**
 * Parses a Tables JSON entity, keeping every number as a {@link JsonNumberLiteral}; undefined
 * for anything but a JSON object (empty, truncated, an array, longer than `maxLength`).
 */
export function parseEntityJson(text: string | undefined, maxLength: number): Record<string, unknown> | undefined {
  if (text === undefined || text === "" || text.length > maxLength) return undefined;
  try {
    const parsed: unknown = JSON.parse(text, keepNumberLiteral as (key: string, value: unknown) => unknown);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function keepNumberLiteral(_key: string, value: unknown, context?: ReviverContext): unknown {
  return typeof value === "number" ? new JsonNumberLiteral(value, context?.source) : value;
}
