import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TRACE_ATTRIBUTES, TRACE_EVENTS } from "../../../src/tracing/traceNames.js";

// docs/tracing.md says its event names and attribute keys are public API: every one the
// observer writes is on the page, and the page names none it does not write.
const doc = readFileSync(new URL("../../../docs/tracing.md", import.meta.url), "utf8");

describe("docs/tracing.md", () => {
  it("lists every event and attribute key the tracing observer writes", () => {
    for (const name of [...Object.values(TRACE_EVENTS), ...Object.values(TRACE_ATTRIBUTES)]) expect(doc, name).toContain(`\`${name}\``);
  });

  it("names no azure.storage event or attribute that does not exist", () => {
    const known = new Set<string>([...Object.values(TRACE_EVENTS), ...Object.values(TRACE_ATTRIBUTES)]);
    // The queries' span.* and event.* scopes name the same keys.
    const named = [...doc.matchAll(/`(azure\.storage\.[a-z_.]+)`/g)].map((m) => m[1] as string);
    expect(named.filter((n) => !known.has(n))).toEqual([]);
  });
});
