import { describe, expect, it } from "vitest";
import { lineChart, niceCeiling } from "../../../tools/report/svgChart.js";

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
