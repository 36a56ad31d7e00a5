import { vi } from "vitest";
import {
  createHttpHeaders,
  createPipelineRequest,
  RestError,
  type PipelineRequest,
  type PipelineResponse,
  type SendRequest,
} from "@azure/core-rest-pipeline";
import type { Registry } from "prom-client";

/** A Tables entity address: `get_entity` on GET. */
export const ENTITY_URL = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";

export function request(init: Partial<Parameters<typeof createPipelineRequest>[0]> = {}): PipelineRequest {
  return createPipelineRequest({ ...init, url: init.url ?? ENTITY_URL, method: init.method ?? "GET" });
}

export function reply(req: PipelineRequest, status: number, headers: Record<string, string> = {}): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders(headers) };
}

export type Step = (req: PipelineRequest) => PipelineResponse | Error;

export const ok: Step = (req) => reply(req, 200);
export const serverBusy: Step = (req) => reply(req, 503, { "x-ms-error-code": "ServerBusy" });
export const internal: Step = (req) => reply(req, 500, { "x-ms-error-code": "InternalError" });
export const notFound: Step = (req) => reply(req, 404, { "x-ms-error-code": "ResourceNotFound" });
export const timedOut: Step = () => new RestError("timed out", { code: "ETIMEDOUT" });

/** A `next` that answers from a script, one step per attempt, and fails on an extra attempt. */
export function scripted(...steps: Step[]) {
  return vi.fn<SendRequest>(async (req) => {
    const step = steps.shift();
    if (!step) throw new Error("unexpected extra attempt");
    const result = step(req);
    if (result instanceof Error) throw result;
    return result;
  });
}

/** One sample of the registry's output, found by metric name and an exact label set. */
export async function sampleValue(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const samples = await samplesOf(registry, name);
  const wanted = Object.entries(labels);
  const match = samples.filter(
    (s) => Object.keys(s.labels).length === wanted.length && wanted.every(([key, value]) => String(s.labels[key]) === value),
  );
  if (match.length > 1) throw new Error(`${match.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return match[0]?.value;
}

/** Every sample whose metric name (or `_bucket`/`_sum`/`_count` line) is `name`. */
export async function samplesOf(registry: Registry, name: string): Promise<Array<{ labels: Record<string, string | number>; value: number }>> {
  const metrics = await registry.getMetricsAsJSON();
  const out: Array<{ labels: Record<string, string | number>; value: number }> = [];
  for (const metric of metrics) {
    for (const value of metric.values as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>) {
      if ((value.metricName ?? metric.name) === name) out.push({ labels: value.labels, value: value.value });
    }
  }
  return out;
}

/** The sum over every sample of `name` whose labels include `labels`. */
export async function sumOf(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const samples = await samplesOf(registry, name);
  return samples
    .filter((s) => Object.entries(labels).every(([key, value]) => String(s.labels[key]) === value))
    .reduce((total, s) => total + s.value, 0);
}
