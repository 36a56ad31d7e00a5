import { escapeHtml } from "./escapeHtml.js";

/** One line of a chart; a null y leaves a gap. */
export interface ChartSeries {
  name: string;
  color: string;
  points: ReadonlyArray<readonly [x: number, y: number | null]>;
  dashed?: boolean;
}

/** A horizontal reference line (e.g. the per-partition target). */
export interface ReferenceLine {
  value: number;
  label: string;
  color: string;
}

/** Options of {@link lineChart}. */
export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly ChartSeries[];
  references?: readonly ReferenceLine[];
  width?: number;
  height?: number;
}

const MARGIN = { top: 52, right: 16, bottom: 44, left: 64 };

/**
 * An inline SVG line chart with axes, ticks, a legend and optional reference lines; no
 * scripts, no external resources. Pure: the same data gives the same markup.
 */
export function lineChart(options: LineChartOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 280;
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const plotHeight = height - MARGIN.top - MARGIN.bottom;
  const xs = options.series.flatMap((s) => s.points.map(([x]) => x));
  const ys = [...options.series.flatMap((s) => s.points.map(([, y]) => y ?? 0)), ...(options.references ?? []).map((r) => r.value)];
  const xMax = Math.max(1, ...xs);
  const yAxis = axisScale(Math.max(1, ...ys));
  const yMax = yAxis.max;
  const x = (value: number) => MARGIN.left + (value / xMax) * plotWidth;
  const y = (value: number) => MARGIN.top + plotHeight - (value / yMax) * plotHeight;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(options.title)}">`);
  parts.push(`<text x="${MARGIN.left}" y="20" font-size="14" font-weight="bold">${escapeHtml(options.title)}</text>`);
  for (const tick of ticks(yMax, yAxis.step)) {
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${fmt(y(tick))}" y2="${fmt(y(tick))}" stroke="#e3e3e3"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${fmt(y(tick) + 4)}" font-size="11" text-anchor="end">${tick}</text>`);
  }
  for (const tick of ticks(xMax, niceCeiling(xMax / 5))) {
    parts.push(`<text x="${fmt(x(tick))}" y="${MARGIN.top + plotHeight + 16}" font-size="11" text-anchor="middle">${tick}</text>`);
  }
  parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotHeight}" stroke="#555"/>`);
  parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${MARGIN.top + plotHeight}" y2="${MARGIN.top + plotHeight}" stroke="#555"/>`);
  parts.push(`<text x="${MARGIN.left + plotWidth / 2}" y="${height - 6}" font-size="12" text-anchor="middle">${escapeHtml(options.xLabel)}</text>`);
  parts.push(
    `<text transform="translate(14 ${MARGIN.top + plotHeight / 2}) rotate(-90)" font-size="12" text-anchor="middle">${escapeHtml(options.yLabel)}</text>`,
  );
  for (const reference of options.references ?? []) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${fmt(y(reference.value))}" y2="${fmt(y(reference.value))}" stroke="${reference.color}" stroke-dasharray="6 4"/>`,
    );
    parts.push(`<text x="${MARGIN.left + plotWidth - 4}" y="${fmt(y(reference.value) - 4)}" font-size="11" text-anchor="end" fill="${reference.color}">${escapeHtml(reference.label)}</text>`);
  }
  for (const series of options.series) {
    for (const path of segments(series.points)) {
      const d = path.map(([px, py], i) => `${i === 0 ? "M" : "L"}${fmt(x(px))} ${fmt(y(py))}`).join(" ");
      const dash = series.dashed === true ? ` stroke-dasharray="4 3"` : "";
      parts.push(`<path class="series" d="${d}" fill="none" stroke="${series.color}" stroke-width="2"${dash}/>`);
    }
  }
  // The legend sits on its own row under the title, so long titles never collide with it.
  let legendX = MARGIN.left;
  for (const series of options.series) {
    parts.push(`<rect x="${legendX}" y="31" width="12" height="4" fill="${series.color}"/>`);
    parts.push(`<text x="${legendX + 16}" y="37" font-size="11">${escapeHtml(series.name)}</text>`);
    legendX += 24 + series.name.length * 6.5;
  }
  parts.push("</svg>");
  return parts.join("\n");
}

/** Runs of consecutive non-null points. */
function segments(points: ChartSeries["points"]): Array<Array<[number, number]>> {
  const runs: Array<Array<[number, number]>> = [];
  let current: Array<[number, number]> = [];
  for (const [px, py] of points) {
    if (py === null) {
      if (current.length > 0) runs.push(current);
      current = [];
    } else current.push([px, py]);
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

/** The smallest of `steps` (by default 1, 2 or 5) times a power of ten at or above `value`. */
export function niceCeiling(value: number, steps: readonly number[] = [1, 2, 5, 10]): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of steps) if (step * power >= value) return step * power;
  return 10 * power;
}

/**
 * A value axis for data up to `value`: ticks every 1, 2 or 5 times a power of ten, at most five
 * intervals, and the first tick at or above `value` as its end (data peaking at 2,500 ends at 2,500
 * in steps of 500, where rounding the peak itself up to 1, 2 or 5 x 10^n gave 5,000).
 */
export function axisScale(value: number): { max: number; step: number } {
  const step = niceCeiling(value / 5);
  // Rounded to the step's precision, so 0.1 + 0.2 style residue neither adds a tick nor shows in a label.
  const intervals = Math.ceil(Number((value / step).toFixed(9)));
  return { max: Number((intervals * step).toPrecision(12)), step };
}

function ticks(max: number, step: number): number[] {
  const result: number[] = [];
  for (let tick = 0; tick <= max + 1e-9; tick += step) result.push(Math.round(tick * 1000) / 1000);
  return result;
}

function fmt(value: number): string {
  return value.toFixed(1);
}
