import { describe, expect, it } from "vitest";
import { axisScale, lineChart, niceCeiling } from "../../../tools/report/svgChart.js";

describe("lineChart", () => {
  const chart = lineChart({
    title: "Throughput <of p0>",
    xLabel: "seconds",
    yLabel: "entities/s",
    series: [
      { name: "achieved", color: "#1f77b4", points: [[0, 10], [1, 20], [2, null], [3, 40]] },
      { name: "asked", color: "#777", points: [[0, 15], [3, 15]], dashed: true },
    ],
    references: [{ value: 2000, label: "target", color: "red" }],
  });

  it("is one standalone SVG element with escaped text and no scripts or external references", () => {
    expect(chart.startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\"")).toBe(true);
    expect(chart.endsWith("</svg>")).toBe(true);
    expect(chart).toContain("Throughput &lt;of p0&gt;");
    expect(chart).not.toMatch(/<script|href=|url\(/i);
  });

  it("draws a path per unbroken run of points (a null leaves a gap), a legend and the reference line", () => {
    expect(chart.match(/<path class="series"/g)).toHaveLength(3);
    expect(chart).toContain(">achieved</text>");
    expect(chart).toContain(">asked</text>");
    expect(chart).toContain(">target</text>");
    expect(chart).toContain('stroke-dasharray="4 3"');
  });

  it("scales the y axis to a round number above the largest value or reference", () => {
    expect(chart).toContain(">2000</text>");
    expect([niceCeiling(0.7), niceCeiling(1), niceCeiling(13), niceCeiling(2000), niceCeiling(2001), niceCeiling(45000)]).toEqual([1, 1, 20, 2000, 5000, 50000]);
  });
});

describe("the value axis ends at the first tick at or above the data", () => {
  it.each([
    [0.7, 0.8, 0.2],
    [13, 15, 5],
    [1001, 1500, 500],
    [2000, 2000, 500],
    [2001, 2500, 500],
    [2500, 2500, 500],
    [2600, 3000, 1000],
    [45_000, 50_000, 10_000],
  ])("data up to %d: axis to %d in steps of %d", (value, max, step) => {
    expect(axisScale(value)).toEqual({ max, step });
  });

  it("the stress report's throughput, asked up to 2,500 entities/s beside the 2,000 target, ends at 2,500, not 5,000", () => {
    const throughput = lineChart({
      title: "Throughput",
      xLabel: "seconds",
      yLabel: "entities/s",
      series: [
        { name: "achieved", color: "#1f77b4", points: [[0, 240], [10, 1200], [20, 1950]] },
        { name: "asked", color: "#777", points: [[0, 250], [10, 1375], [20, 2500]], dashed: true },
      ],
      references: [{ value: 2000, label: "per-partition target 2000/s", color: "red" }],
    });
    const labels = [...throughput.matchAll(/text-anchor="end">(\d+)<\/text>/g)].map((m) => Number(m[1]));
    expect(labels).toEqual([0, 500, 1000, 1500, 2000, 2500]);
  });
});
