import { describe, expect, it } from "vitest";
import { TableClient } from "@azure/data-tables";
import { installResilience } from "../../../src/index.js";

const client = () => new TableClient("https://acct.table.core.windows.net", "orders");
const names = (c: TableClient) => c.pipeline.getOrderedPolicies().map((policy) => policy.name);

describe("installResilience's tracing option", () => {
  it("puts the resend count after the SDK's tracingPolicy (inside the attempt's context), and takes it out on dispose", () => {
    const c = client();
    const handle = installResilience(c, { metrics: false });
    const order = names(c);
    expect(order.indexOf("tracingPolicy")).toBeGreaterThan(-1);
    expect(order.indexOf("resendCountPolicy")).toBeGreaterThan(order.indexOf("tracingPolicy"));
    expect(order.indexOf("resilientRetryPolicy")).toBeLessThan(order.indexOf("tracingPolicy"));
    handle.dispose();
    expect(names(c)).not.toContain("resendCountPolicy");
  });

  it("tracing: false adds nothing", () => {
    const c = client();
    installResilience(c, { metrics: false, tracing: false });
    expect(names(c)).not.toContain("resendCountPolicy");
  });

  it("names a bad value", () => {
    expect(() => installResilience(client(), { tracing: null as never })).toThrow(/^tracing must be false or an options object; got null/);
    expect(() => installResilience(client(), { tracing: { partitionAttribute: 1 as never } })).toThrow(/^tracing\.partitionAttribute must be a boolean; got/);
    expect(() => installResilience(client(), { tracing: { circuitBreaker: {} } as never })).toThrow(/tracing\.circuitBreaker is not a known option of tracing/);
  });
});
