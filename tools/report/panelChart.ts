// Hand-written SVG panels over time (the benchmark charts): no chart library, a few
// rectangles, polylines and labels.
import { escapeHtml } from "./escapeHtml.js";
import { niceCeiling } from "./svgChart.js";

/** One line of a panel. */
export interface Line {
  label: string;
  color: string;
  values: readonly number[];
  /** Dashed when true. */
  dashed?: boolean;
}

/** A shaded time range (e.g. an outage). */
export interface Band {
  label: string;
  color: string;
  fromInMs: number;
  toInMs: number;
}

/** One panel: lines over time, sharing the chart's x axis. */
export interface Panel {
  title: string;
  lines: readonly Line[];
}

/** Options of {@link panelChart}. */
export interface PanelChartOptions {
  title: string;
  /** Width of one bin, so bin i sits at i * binInMs. */
  binInMs: number;
  /** Label of the y axis, e.g. "per 500 ms". */
  yLabel: string;
  panels: readonly Panel[];
  bands?: readonly Band[];
  width?: number;
  panelHeight?: number;
}

const MARGIN = { left: 52, right: 16, top: 62, bottom: 36 };
const PANEL_GAP = 34;
const LEGEND_LINE_HEIGHT = 16;
/** Finer than lineChart's: the panels are short, and a 2.5 step keeps their lines from looking flat. */
const PANEL_STEPS = [1, 2, 2.5, 5, 10] as const;

/**
 * Stacked panels of binned counts over time, with shaded bands (outages), sharing one
 * y scale so the panels compare at a glance. Pure: the same data gives the same markup.
 */
export function panelChart(options: PanelChartOptions): string {
  const width = options.width ?? 820;
  const panelHeight = options.panelHeight ?? 130;
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const bins = Math.max(1, ...options.panels.flatMap((p) => p.lines.map((l) => l.values.length)));
  const totalInMs = bins * options.binInMs;
  const yMax = niceCeiling(Math.max(1, ...options.panels.flatMap((p) => p.lines.flatMap((l) => l.values))), PANEL_STEPS);
  const legendItems = legend(options, MARGIN.left, 38, width - MARGIN.right);
  const top0 = MARGIN.top + legendItems.extraHeight;
  const height = top0 + options.panels.length * (panelHeight + PANEL_GAP) - PANEL_GAP + MARGIN.bottom;
  const x = (ms: number) => MARGIN.left + (ms / totalInMs) * plotWidth;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${MARGIN.left}" y="18" font-size="14" font-weight="bold">${escapeHtml(options.title)}</text>`,
  );
  parts.push(legendItems.svg);
  options.panels.forEach((panel, index) => {
    const top = top0 + index * (panelHeight + PANEL_GAP);
    const y = (value: number) => top + panelHeight - (value / yMax) * panelHeight;
    parts.push(`<text x="${MARGIN.left}" y="${top - 6}" font-weight="bold">${escapeHtml(panel.title)}</text>`);
    for (const band of options.bands ?? []) {
      parts.push(
        `<rect x="${f(x(band.fromInMs))}" y="${top}" width="${f(x(band.toInMs) - x(band.fromInMs))}" height="${panelHeight}" fill="${band.color}" fill-opacity="0.18"/>`,
      );
    }
    parts.push(`<rect x="${MARGIN.left}" y="${top}" width="${plotWidth}" height="${panelHeight}" fill="none" stroke="#999" stroke-width="0.5"/>`);
    for (const tick of [0, yMax / 2, yMax]) {
      parts.push(
        `<line x1="${MARGIN.left - 3}" x2="${MARGIN.left + plotWidth}" y1="${f(y(tick))}" y2="${f(y(tick))}" stroke="#ddd" stroke-width="0.5"/>`,
        `<text x="${MARGIN.left - 6}" y="${f(y(tick) + 4)}" text-anchor="end">${formatNumber(tick)}</text>`,
      );
    }
    for (const line of panel.lines) {
      const points = line.values.map((value, i) => `${f(x((i + 0.5) * options.binInMs))},${f(y(value))}`).join(" ");
      const dash = line.dashed ? ` stroke-dasharray="4 3"` : "";
      parts.push(`<polyline points="${points}" fill="none" stroke="${line.color}" stroke-width="1.6"${dash}/>`);
    }
    const axisY = top + panelHeight;
    for (let s = 0; s * 1000 <= totalInMs; s += secondsStep(totalInMs)) {
      parts.push(
        `<line x1="${f(x(s * 1000))}" x2="${f(x(s * 1000))}" y1="${axisY}" y2="${axisY + 3}" stroke="#666"/>`,
        `<text x="${f(x(s * 1000))}" y="${axisY + 14}" text-anchor="middle">${s}s</text>`,
      );
    }
  });
  parts.push(
    `<text x="14" y="${top0 + 40}" transform="rotate(-90 14 ${top0 + 40})" text-anchor="end">${escapeHtml(options.yLabel)}</text>`,
    "</svg>",
  );
  return parts.join("\n") + "\n";
}

/** The legend, wrapped onto as many lines as the width needs; `extraHeight` is what the lines beyond the first take. */
function legend(options: PanelChartOptions, left: number, y: number, right: number): { svg: string; extraHeight: number } {
  const seen = new Map<string, Line>();
  for (const panel of options.panels) for (const line of panel.lines) if (!seen.has(line.label)) seen.set(line.label, line);
  const entries: Array<{ width: number; draw: (x: number, y: number) => string }> = [];
  for (const line of seen.values()) {
    const dash = line.dashed ? ` stroke-dasharray="4 3"` : "";
    entries.push({
      width: 30 + line.label.length * 6,
      draw: (x, yy) =>
        `<line x1="${x}" x2="${x + 18}" y1="${yy - 4}" y2="${yy - 4}" stroke="${line.color}" stroke-width="2"${dash}/>\n` +
        `<text x="${x + 22}" y="${yy}">${escapeHtml(line.label)}</text>`,
    });
  }
  for (const band of options.bands ?? []) {
    entries.push({
      width: 26 + band.label.length * 6,
      draw: (x, yy) =>
        `<rect x="${x}" y="${yy - 9}" width="14" height="10" fill="${band.color}" fill-opacity="0.3"/>\n<text x="${x + 18}" y="${yy}">${escapeHtml(band.label)}</text>`,
    });
  }
  const items: string[] = [];
  let x = left;
  let line = 0;
  for (const entry of entries) {
    if (x > left && x + entry.width > right) {
      x = left;
      line += 1;
    }
    items.push(entry.draw(x, y + line * LEGEND_LINE_HEIGHT));
    x += entry.width;
  }
  return { svg: items.join("\n"), extraHeight: line * LEGEND_LINE_HEIGHT };
}

function secondsStep(totalInMs: number): number {
  const seconds = totalInMs / 1000;
  return seconds <= 5 ? 1 : seconds <= 20 ? 2 : seconds <= 60 ? 5 : 10;
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function f(value: number): string {
  return value.toFixed(1);
}
