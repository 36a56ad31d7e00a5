import { readODataStringLiteral } from "./odataStringLiteral.js";

/** The first account-relative path segment of a Tables request, taken apart. */
export interface TableSegment {
  /** The text before `(`: a table name, `Tables`, or `$batch`. */
  name: string;
  /** True when the segment carries parentheses: `orders()`, `orders(...)`, `Tables('x')`. */
  hasParentheses: boolean;
  /** Named key literals: `PartitionKey` and `RowKey` of an entity address. */
  keys: Map<string, string>;
  /** A lone literal in the parentheses, as in `Tables('orders')`. */
  positional?: string;
}

/**
 * Parses `orders(PartitionKey='p''1',RowKey='r')` (already percent-decoded) into its
 * table name and key literals. Quote-aware, so commas, parentheses and `=` inside keys
 * do not confuse it. Returns undefined for a segment with malformed parentheses.
 */
export function parseTableSegment(segment: string): TableSegment | undefined {
  const open = segment.indexOf("(");
  if (open === -1) return { name: segment, hasParentheses: false, keys: new Map() };
  const name = segment.slice(0, open);
  const keys = new Map<string, string>();
  let index = skipSpaces(segment, open + 1);
  if (segment[index] === "'") {
    const literal = readODataStringLiteral(segment, index);
    if (literal === undefined) return undefined;
    index = skipSpaces(segment, literal.end);
    return segment[index] === ")" ? { name, hasParentheses: true, keys, positional: literal.value } : undefined;
  }
  while (index < segment.length && segment[index] !== ")") {
    const equals = segment.indexOf("=", index);
    if (equals === -1) return undefined;
    const key = segment.slice(index, equals).trim();
    const literal = readODataStringLiteral(segment, skipSpaces(segment, equals + 1));
    if (key === "" || literal === undefined) return undefined;
    keys.set(key, literal.value);
    index = skipSpaces(segment, literal.end);
    if (segment[index] === ",") index = skipSpaces(segment, index + 1);
    else if (segment[index] !== ")") return undefined;
  }
  return segment[index] === ")" ? { name, hasParentheses: true, keys } : undefined;
}

function skipSpaces(text: string, index: number): number {
  while (text[index] === " ") index++;
  return index;
}
