import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import CircuitBreaker from "opossum";
import { createBucketRotator } from "../../../src/breaker/bucketRotator.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("createBucketRotator", () => {
  // Pins the contract with opossum: if a new opossum version used other EventEmitter methods, this fails.
  it("is what opossum's Status listens on: one listener per breaker, removed on shutdown", async () => {
    const rotator = createBucketRotator(100);
    const breakers = Array.from(
      { length: 3 },
      () => new CircuitBreaker(async () => "ok", { rotateBucketController: rotator.controller, enableSnapshots: false, timeout: false }),
    );
    expect(rotator.listenerCount).toBe(3);
    expect(vi.getTimerCount()).toBe(1);
    const first = breakers[0]!;
    await first.fire();
    expect(first.status.window[0]?.successes).toBe(1);
    vi.advanceTimersByTime(100);
    expect(first.status.window[0]?.successes).toBe(0);
    expect(first.status.window[1]?.successes).toBe(1);
    for (const breaker of breakers) breaker.shutdown();
    expect(rotator.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does not register a breaker twice when it is re-enabled", () => {
    const rotator = createBucketRotator(100);
    const breaker = new CircuitBreaker(async () => "ok", { rotateBucketController: rotator.controller, enableSnapshots: false });
    breaker.enable();
    expect(rotator.listenerCount).toBe(1);
    breaker.disable();
    expect(rotator.listenerCount).toBe(0);
    breaker.shutdown();
  });

  it("stop() forgets every listener and clears its interval", () => {
    const rotator = createBucketRotator(100);
    const rotate = vi.fn();
    rotator.controller.on("rotate", rotate);
    vi.advanceTimersByTime(250);
    expect(rotate).toHaveBeenCalledTimes(2);
    rotator.stop();
    vi.advanceTimersByTime(1000);
    expect(rotate).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
