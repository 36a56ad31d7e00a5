import { setFlagsFromString } from "node:v8";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetricsObserver, createPartitionBreaker, createRetryBudget } from "../../../src/index.js";
import { createScopeRegistry } from "../../../src/breaker/scopeRegistry.js";
import { resolveRetryPolicyOptions } from "../../../src/policies/retryPolicyOptions.js";
import { createAttemptDeadlines } from "../../../src/timing/attemptDeadlines.js";

// V8 keeps some objects in dictionary mode (an object literal with a getter is made that
// way), where every property read is a hash probe. The objects the retry loop reads on
// every request must not be: this asks V8 itself, through its natives syntax.
setFlagsFromString("--allow-natives-syntax");
const hasFastProperties = new Function("o", "return %HasFastProperties(o);") as (o: object) => boolean;

describe("objects read on every request keep V8's fast properties", () => {
  it("the settings, their direct-gate calls, the deadline queue, the retry budget, the scope registry, the metrics observer", () => {
    const breaker = createPartitionBreaker({ service: "table" });
    const settings = resolveRetryPolicyOptions({ gate: breaker, retryBudget: createRetryBudget() });
    const registry = createScopeRegistry<number>({ maxEntries: 10, idleTtlInMs: 1000, onEvict: () => {} });
    const objects: Record<string, object | undefined> = {
      settings,
      "settings.direct": settings.direct,
      deadlines: createAttemptDeadlines(),
      budget: settings.budget,
      registry,
      metrics: createMetricsObserver("table", { registry: new Registry() }),
    };
    try {
      for (const [name, object] of Object.entries(objects)) {
        expect(object, name).toBeDefined();
        expect(hasFastProperties(object as object), name).toBe(true);
      }
      // The check can tell: an object literal with a getter is in dictionary mode.
      expect(hasFastProperties({ f() {}, get g() { return 1; } })).toBe(false);
    } finally {
      registry.clear();
      breaker.dispose();
    }
  });
});
