/** A string literal read from OData text and the index just past its closing quote. */
export interface ODataStringLiteral {
  /** The literal's value, with doubled quotes (`''`) collapsed to one. */
  value: string;
  /** The index after the closing quote. */
  end: number;
}

/**
 * Reads the OData string literal that starts with the `'` at `start`. Inside it a
 * quote is written twice (`'O''Brien'`). Returns undefined when `start` is not a quote
 * or the literal is not closed.
 */
export function readODataStringLiteral(text: string, start: number): ODataStringLiteral | undefined {
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
