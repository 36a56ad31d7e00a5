import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";

/**
 * A stub HttpClient for unit tests through a real TableClient: 503 ServerBusy (with the
 * Tables error body) for PartitionKey 'hot', 204 for anything else; it records every request.
 */
export function hotPartitionHttpClient(): HttpClient & { requests: PipelineRequest[] } {
  const requests: PipelineRequest[] = [];
  return {
    requests,
    async sendRequest(request) {
      requests.push(request);
      if (!request.url.includes("PartitionKey='hot'")) return { request, status: 204, headers: createHttpHeaders({}) };
      const headers = createHttpHeaders({ "content-type": "application/json", "x-ms-error-code": "ServerBusy" });
      const bodyAsText = JSON.stringify({ "odata.error": { code: "ServerBusy", message: { lang: "en-US", value: "busy" } } });
      return { request, status: 503, headers, bodyAsText };
    },
  };
}
