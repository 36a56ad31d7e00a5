/**
 * Lays out rows as a plain-text table: the first column left-aligned, the rest right-aligned,
 * two spaces between columns. Pure.
 */
export function textTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** A count or latency as a table cell: `-` for none. */
export function cell(value: number | null | undefined): string {
  return value === null || value === undefined ? "-" : String(value);
}
