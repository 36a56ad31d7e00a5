/**
 * Reads the OData string literal that starts with the `'` at `start`: its value, a quote written
 * twice inside it (`'O''Brien'`) read as one, and `end`, the index after its closing quote.
 * Undefined when `start` is not a quote or the literal is not closed.
 */
function readODataStringLiteral(text: string, start: number): { value: string; end: number } | undefined {
  if (text[start] !== "'") return undefined;
  let value = "";
  let index = start + 1;
  while (index < text.length) {
    const quote = text.indexOf("'", index);
    if (quote === -1) return undefined;
    value += text.slice(index, quote);
    if (text[quote + 1] === "'") {
      value += "'";
      index = quote + 2;
      continue;
    }
    return { value, end: quote + 1 };
  }
  return undefined;
}

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

type Token = { kind: "word"; text: string } | { kind: "string"; text: string } | { kind: "open" } | { kind: "close" };

const PARTITION_KEY = "PartitionKey";

/**
 * The PartitionKey a Tables `$filter` pins, or undefined when the query may span
 * partitions. It pins one when, at the top level, the filter is a conjunction (`and`)
 * with a term `PartitionKey eq '<value>'` (either side); other conjuncts only narrow
 * the result, so they may hold anything, `or` included. A top-level `or` or `not`,
 * two different PartitionKey equalities, or unparsable text give undefined.
 */
export function partitionKeyFromFilter(filter: string): string | undefined {
  const tokens = tokenize(filter);
  if (tokens === undefined) return undefined;
  const values = new Set<string>();
  if (!collectPartitionKeys(tokens, values)) return undefined;
  if (values.size !== 1) return undefined;
  return values.values().next().value;
}

/** Adds the PartitionKey equalities of a conjunction to `values`; false if it is not one. */
function collectPartitionKeys(tokens: Token[], values: Set<string>): boolean {
  const terms = splitConjunction(tokens);
  if (terms === undefined) return false;
  for (const term of terms) {
    const inner = unwrapParentheses(term);
    if (inner !== undefined) {
      // A parenthesised conjunction adds its keys; anything else in parentheses only narrows.
      collectPartitionKeys(inner, values);
      continue;
    }
    const value = partitionKeyEquality(term);
    if (value !== undefined) values.add(value);
  }
  return true;
}

/** Splits on top-level `and`; undefined when a top-level `or`/`not` makes it no conjunction. */
function splitConjunction(tokens: Token[]): Token[][] | undefined {
  const terms: Token[][] = [];
  let current: Token[] = [];
  let depth = 0;
  for (const token of tokens) {
    if (token.kind === "open") depth++;
    if (token.kind === "close") depth--;
    if (depth < 0) return undefined;
    if (depth === 0 && token.kind === "word") {
      const word = token.text.toLowerCase();
      if (word === "or" || word === "not") return undefined;
      if (word === "and") {
        terms.push(current);
        current = [];
        continue;
      }
    }
    current.push(token);
  }
  if (depth !== 0) return undefined;
  terms.push(current);
  return terms;
}

/** The tokens inside `( ... )` when the parentheses wrap the whole term. */
function unwrapParentheses(term: Token[]): Token[] | undefined {
  if (term[0]?.kind !== "open" || term[term.length - 1]?.kind !== "close") return undefined;
  let depth = 0;
  for (let i = 0; i < term.length; i++) {
    const kind = term[i]?.kind;
    if (kind === "open") depth++;
    if (kind === "close") depth--;
    if (depth === 0 && i < term.length - 1) return undefined; // `(a) and (b)` shape, not one group
  }
  return term.slice(1, -1);
}

function partitionKeyEquality(term: Token[]): string | undefined {
  if (term.length !== 3) return undefined;
  const [left, operator, right] = term;
  if (operator?.kind !== "word" || operator.text.toLowerCase() !== "eq") return undefined;
  if (left?.kind === "word" && left.text === PARTITION_KEY && right?.kind === "string") return right.text;
  if (right?.kind === "word" && right.text === PARTITION_KEY && left?.kind === "string") return left.text;
  return undefined;
}

function tokenize(filter: string): Token[] | undefined {
  const tokens: Token[] = [];
  let index = 0;
  while (index < filter.length) {
    const char = filter[index];
    if (char === " " || char === "\t" || char === "\n" || char === "\r") {
      index++;
    } else if (char === "(") {
      tokens.push({ kind: "open" });
      index++;
    } else if (char === ")") {
      tokens.push({ kind: "close" });
      index++;
    } else if (char === "'") {
      const literal = readODataStringLiteral(filter, index);
      if (literal === undefined) return undefined;
      tokens.push({ kind: "string", text: literal.value });
      index = literal.end;
    } else {
      const end = wordEnd(filter, index);
      tokens.push({ kind: "word", text: filter.slice(index, end) });
      index = end;
    }
  }
  return tokens;
}

function wordEnd(text: string, start: number): number {
  let index = start;
  while (index < text.length && !" \t\r\n()'".includes(text[index] ?? " ")) index++;
  return index;
}
